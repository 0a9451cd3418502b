"""The mathematical notation of the tables, captions and figure labels, in LaTeX: the one place
outside the paper builder where a symbol is spelled (``$\\delta(R_l)$``, ``$\\lambda_V(\\beta)$``).
A family's report and paper part compose their captions and column names from these constants,
one module per family (``verification.paper.notation.<family>``), so that no module outside
``verification/paper/`` holds LaTeX (``tests/test_house.py``)."""
