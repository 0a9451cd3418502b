"""SAN family: attention-only vs standard decoders at tiny scale (docs/theory.md, section 5).

checks (``checks.presets``: the settings; ``checks.runs``: a preset -> one chunk per trained
decoder -> records; ``checks.claims``: the paper's claims as objects; ``checks.measures``: a stored
run's measures; ``checks.gates``: the gates before a claim is tested, typed; ``checks.decide``: the
stored runs -> the claims' outcome records), findings (``findings(store, plan)``: the stored chunks
-> typed values), report (the findings -> tables and figures, written as Markdown/CSV and PNG/PDF),
paper (``paper_part``: the findings as the paper's tables, figures and macros), command (the
``attnbounds san`` subcommand and the ``san`` section of the main job).
"""
