"""``buffer-sizing``: Appenzeller, Keslassy and McKeown, "Sizing Router Buffers" (SIGCOMM 2004):
n desynchronised long-lived TCP flows need a buffer of RTT × C / √n, not RTT × C."""
