"""``fdd-red``: FDD-RED against RED on the three scenarios of Hashemi, Jamali, Motarez."""
