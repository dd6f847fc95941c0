"""``ard``: Hur's ARM and ARD aggregate edge markers against RIO alone."""
