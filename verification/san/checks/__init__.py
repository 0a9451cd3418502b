"""What the SAN family runs: presets (the settings and the campaign each names), runs (a preset ->
one chunk per trained decoder -> records) and claims (the stored runs -> the paper's claims, each
decided against the seed-to-seed noise floor)."""
