"""The claims of ``red-vs-droptail``, each declared once, as an object.

RFC 2309 (Braden et al., 1998), Sec. 3, lists the advantages of active queue management; the
second is "Provide lower-delay interactive service. By keeping the average queue size small,
queue management will reduce the delays seen by flows." It gives no number, so the smallest
effect we count is declared here, with its reason; and a shorter queue bought with an idle link
would not be the advantage the RFC means, so the second claim asks that RED keep the
utilisation of drop-tail within 2 percentage points (our condition, not the RFC's words).

The queue is the bottleneck's time-averaged length in packets (the run metric
``queue_mean_pkts``); at a fixed line rate the mean queueing delay is proportional to it
(Little's law), so "delay" and "queue" are one quantity here.
"""

from __future__ import annotations

from qoslab.verdicts.claims import DECLARED_ONLY, PaperClaim, Part, declare
from qoslab.verdicts.magnitudes import register_claims

NAME = "red-vs-droptail"
#: the sweep every record reads
SWEEP = "queues"

SHORTER_QUEUE = PaperClaim(
    "By keeping the average queue size small, queue management will reduce the delays seen by flows",
    "RFC 2309, Sec. 3, advantage 2",
    "less",
    "a smaller average queue (no number given)",
    (
        Part(
            "less",
            "RED's mean queue / drop-tail's − 1 ≤ −0.25",
            DECLARED_ONLY + "; a quarter shorter queue is the least we call a reduced delay",
            high=-0.25,
        ),
    ),
    (SWEEP,),
    unit=" (RED / drop-tail − 1, mean queue)",
)
SAME_UTILISATION = PaperClaim(
    "RED keeps the bottleneck's utilisation within 2 percentage points of drop-tail's",
    "our condition on RFC 2309, Sec. 3, advantage 2 (the RFC states no utilisation)",
    "greater",
    "utilisation lost ≤ 0.02",
    (
        Part(
            "greater",
            "RED − drop-tail utilisation ≥ −0.02",
            "declared by us: 2 percentage points of the link is the most a shorter queue may cost",
            threshold=-0.02,
            low=-0.02,
        ),
    ),
    (SWEEP,),
    threshold=-0.02,
    unit=" (RED − drop-tail utilisation)",
)

CLAIMS = register_claims(declare(NAME, SHORTER_QUEUE, SAME_UTILISATION))
