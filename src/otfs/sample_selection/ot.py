"""``ot``: the argmax of each row of the exact OT coupling (Algorithm 1 of the paper).

One file of the strategies' folder (:data:`otfs.sample_selection.STRATEGIES`).
"""

from otfs.sample_selection._base import STRATEGIES, _emd_coupling, argmax_rows


@STRATEGIES.register("ot")
def _ot_strategy(small, large, *, tie_break, emd_max_iter, rng):
    """Algorithm 1: the argmax of each row of the exact OT coupling."""
    G, M = _emd_coupling(small, large, emd_max_iter)
    return argmax_rows(G, tie_break=tie_break, random_state=rng, cost=M)
