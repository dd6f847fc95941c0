# Web-search workload: flow-size CDF.
#
# Workload: the query/response and background traffic of a production web-search cluster
# measured by M. Alizadeh et al., "Data Center TCP (DCTCP)", ACM SIGCOMM 2010, Figure 4.
# Table: the tabulation of that distribution used for the simulations of pFabric
# (M. Alizadeh et al., "pFabric: Minimal Near-Optimal Datacenter Transport", ACM SIGCOMM 2013)
# and of many later papers, as published in github.com/HKUST-SING/PIAS-NS2, file
# scripts/CDF_dctcp.tcl (commit 5fb5867c229372c2310b0c197cbe757af83b66c4; identical copy in
# github.com/HKUST-SING/MQ-ECN-NS2, scripts/CDF_dctcp.tcl). Those simulations (pktSize 1460 in
# scripts/spine_empirical.tcl) give the size in packets of 1460 payload bytes.
#
# Unit: bytes. Conversion: size_bytes = size_packets * 1460, exact (no rounding).
# The source's first row "6 packets, probability 0" is omitted: this format's rule that a
# draw u below the first probability returns the first size (here u < 0.15 -> 8760 bytes)
# reproduces it exactly.
#
# Mean of the piecewise-linear CDF: 1140.98 packets = 1 665 830.8 bytes.
#
# size_bytes  cumulative_probability
8760      0.15
18980     0.2
27740     0.3
48180     0.4
77380     0.53
194180    0.6
973820    0.7
1946180   0.8
4866180   0.9
9733820   0.97
29200000  1
