# Data-mining workload: flow-size CDF.
#
# Workload: the flow sizes measured in a data-mining cluster by A. Greenberg et al.,
# "VL2: A Scalable and Flexible Data Center Network", ACM SIGCOMM 2009, Figure 2.
# Table: the tabulation of that distribution used in the datacenter-transport literature
# (e.g. PIAS, Bai et al., NSDI 2015), as published in github.com/HKUST-SING/PIAS-NS2, file
# scripts/CDF_vl2.tcl (commit 5fb5867c229372c2310b0c197cbe757af83b66c4; identical copy in
# github.com/HKUST-SING/MQ-ECN-NS2, scripts/CDF_vl2.tcl). Those simulations (pktSize 1460 in
# scripts/spine_empirical.tcl) give the size in packets of 1460 payload bytes.
#
# Unit: bytes. Conversion: size_bytes = size_packets * 1460, exact (no rounding).
# The source's first row "1 packet, probability 0" is omitted: this format's rule that a
# draw u below the first probability returns the first size (here u < 0.5 -> 1460 bytes)
# reproduces it exactly.
#
# Mean of the piecewise-linear CDF: 5116.6 packets = 7 470 236 bytes.
#
# size_bytes  cumulative_probability
1460        0.5
2920        0.6
4380        0.7
10220       0.8
389820      0.9
3076220     0.95
97333820    0.99
973333820   1
