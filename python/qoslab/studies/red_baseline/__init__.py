"""``red-baseline``: plain RED on the FDD-RED paper's scenarios (Hashemi, Jamali, Motarez)."""
