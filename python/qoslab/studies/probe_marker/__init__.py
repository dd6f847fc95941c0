"""``probe-marker``: the adaptive probe marker of Neglia, Bianchi, Saitta and Lombardo."""
