"""``rio-plus-o``: RIO against RI+O for Assured Service (H.-G. Kim, KIPS Transactions 1999)."""
