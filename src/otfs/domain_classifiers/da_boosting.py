"""``DA boosting``: the shared-boundary booster of Becker et al.
(:class:`otfs.domain_classifiers.DomainAdaptationBoosting`).

One file of the domain classifiers' folder (:data:`otfs.domain_classifiers.DOMAIN_CLASSIFIERS`).
"""

from otfs.domain_classifiers._boosting import DomainAdaptationBoosting, register_domain_classifier

register_domain_classifier("DA boosting")(DomainAdaptationBoosting)
