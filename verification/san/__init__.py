"""SAN family: attention-only vs standard decoders at tiny scale (docs/theory.md, section 5).

checks (``checks.presets``: the settings; ``checks.runs``: a preset -> one chunk per trained
decoder -> records; ``checks.claims``: the stored runs -> the paper's claims), report (stored records
-> tables and figures, written as Markdown/CSV and PNG/PDF), paper (``paper_part``: the paper's
tables, figures and macros), command (the ``attnbounds san`` subcommand and the ``san`` section of
the main job).
"""
