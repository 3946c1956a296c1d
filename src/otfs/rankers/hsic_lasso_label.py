"""``hsic-lasso-label``: block HSIC Lasso with the source label as the output (relevance), under its own name.

One file of the feature rankers' folder (:data:`otfs.rankers.FEATURE_RANKERS`). ``hsic-lasso`` with
``output="label"``; a name of its own so that a leaderboard, which takes one entry per ranker name, can run
both HSIC Lasso rankers of the issue side by side.
"""

from __future__ import annotations

from otfs.rankers._base import FEATURE_RANKERS
from otfs.rankers.hsic_lasso import HSICLassoRanker

__all__ = ["HSICLassoLabelRanker"]


@FEATURE_RANKERS.register("hsic-lasso-label")
class HSICLassoLabelRanker(HSICLassoRanker):
    """Rank features by block HSIC Lasso with the source labels as the output: relevant and non-redundant first.

    :class:`~otfs.rankers.hsic_lasso.HSICLassoRanker` with ``output="label"``
    (HSIC Lasso as its authors use it, for supervised feature selection): the
    source samples with their labels, the order in which the features enter
    the non-negative Lasso path, the first to enter first. It reads no
    target sample and is blind to shift, as ``source-anova`` is; beside
    ``hsic-lasso`` (the domain as the output) it is the relevance half of
    the pair.

    Which planted shifts it recovers (``shift_recovery``): none by design; a
    shifted feature ranks where its relevance puts it.

    Parameters
    ----------
    n_features_to_select : int, float or None, default=None
    block_size, n_permutations, n_path, max_samples, random_state :
        As :class:`~otfs.rankers.hsic_lasso.HSICLassoRanker`'s.

    Attributes
    ----------
    hsic_, entry_, path_scores_, scores_, order_, ranking_, support_, n_features_, n_features_in_ :
        As :class:`~otfs.rankers.hsic_lasso.HSICLassoRanker`'s.

    References
    ----------
    .. [1] M. Yamada, W. Jitkrittum, L. Sigal, E. P. Xing, M. Sugiyama.
       High-dimensional feature selection by feature-wise kernelized Lasso.
       Neural Computation 26(1), 2014.
    .. [2] H. Climente-González, C.-A. Azencott, S. Kaski, M. Yamada.
       Block HSIC Lasso: model-free biomarker detection for ultra-high
       dimensional data. Bioinformatics 35(14), 2019.
    """

    _parameter_constraints: dict = {k: v for k, v in HSICLassoRanker._parameter_constraints.items() if k != "output"}

    #: The output, fixed: not a parameter of this ranker.
    output = "label"

    def __init__(self, n_features_to_select=None, block_size=20, n_permutations=3, n_path=100, max_samples=100,
                 random_state=None):
        self.n_features_to_select = n_features_to_select
        self.block_size = block_size
        self.n_permutations = n_permutations
        self.n_path = n_path
        self.max_samples = max_samples
        self.random_state = random_state
