"""``twam-dwred``: the TCP-Window-Aware Marker and Dynamic WRED (Bouras & Sevasti)."""
