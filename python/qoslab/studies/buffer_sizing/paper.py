"""What the paper states, with where each fact was read.

Sources (the paper's own text was read in these public copies; none is in shared/papers):

- the abstract, as the SIGCOMM 2004 paper prints it: studylib.net/doc/10754627/sizing-router-buffers;
  the same abstract opens Appenzeller's Stanford thesis (2005) and the Stanford HPNG technical
  report TR04-HPNG-06-08-00 (slideshare.net/nawal08548/4-sizing-router-buffers);
- the authors' revisit, "Sizing Router Buffers (Redux)", CCR 2019
  (ccronline.sigcomm.org/2019/ccr-october-2019/sizing-router-buffers-redux/).

Confirmed there: the rule of thumb B = RTT × C with RTT "the average round-trip time of a flow
passing across the link"; the example "250ms × 10Gb/s = 2.5Gbits"; the result "a link with n
flows requires no more than B = (RTT × C)/√n, for long-lived or short-lived TCP flows"; the two
headline sentences below; "using theory, simulation and experiments on a network of real
routers". The figures' setups (link rates, RTT spread, flow counts of the simulations, the
values of the 98 / 99.5 / 99.9 % minimum-buffer figure) were not readable in those copies: the
claims that rest on them say so, and no number of them is used here.
"""

from __future__ import annotations

ABSTRACT = "Appenzeller, Keslassy, McKeown, Sizing Router Buffers, SIGCOMM 2004, abstract"

#: the rule, as the abstract states it
RULE = "a link with n flows requires no more than B = (RTT × C)/√n"
#: the headline sentences, as the abstract states them, with their rates and flow counts
HEADLINE_REDUCE = (
    "A 2.5Gb/s link carrying 10,000 flows could reduce its buffers by 99% with negligible "
    "difference in throughput"
)
HEADLINE_10MBIT = "a 10Gb/s link carrying 50,000 flows requires only 10Mbits of buffering"
#: the sentences' scales: (rate b/s, flows)
REDUCE_AT = (2.5e9, 10_000)
TENMBIT_AT = (10e9, 50_000)
#: the round-trip time of the abstract's rule-of-thumb example ("250ms × 10Gb/s = 2.5Gbits");
#: at 10 Gb/s and 50,000 flows it gives 2.5 Gbit / √50,000 = 11.2 Mbit, the sentence's "10 Mbits"
EXAMPLE_RTT_MS = 250.0
TEN_MBIT = 10e6
#: the abstract's scope of the rule, which covers short flows too
SHORT_LIVED = "for long-lived or short-lived TCP flows"
#: the paper's short-flow result as the issue that asked for this study summarises it (the
#: paper's own short-flow section was not readable in the copies above): the buffer short flows
#: need "depends on load, not on line rate or RTT"
SHORT_FLOW_RESULT = "the buffer short flows need depends on the load, not on the line rate or the RTT"
SHORT_NOT_RATE_RTT_WORDS = "the buffer short flows need does not depend on the line rate or the RTT"
SHORT_LOAD_WORDS = "the buffer short flows need depends on the load"
SHORT_FLOW_PLACE = (
    "abstract ('" + SHORT_LIVED + "'); the short-flow model's result in our statement of it "
    "(the paper's section not read here)"
)
