"""``rio-plus-o``: RIO against RI+O for Assured Service (H.-G. Kim, "A modified RIO for
Improving Assured Service Performance", 1999)."""
