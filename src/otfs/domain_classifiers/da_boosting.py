"""``DA boosting``: the shared-boundary booster of Becker et al. (:class:`otfs.boosting.DomainAdaptationBoosting`).

One file of the domain classifiers' folder (:data:`otfs.boosting.DOMAIN_CLASSIFIERS`).
"""

from ..boosting import DomainAdaptationBoosting, register_domain_classifier

register_domain_classifier("DA boosting")(DomainAdaptationBoosting)
