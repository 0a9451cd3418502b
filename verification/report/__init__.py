"""The report layer: stored records -> tables (Markdown/CSV/LaTeX), figures (PNG/PDF) and the
statistics they quote. A report reads the store only; it never recomputes."""
