"""gpreempt.eval.figures: what a timeline bar means — the intervals in which a kernel's waves ran,
its process's suspensions cut out (a suspended kernel holds no CU)."""
from gpreempt.eval import figures


def test_a_kernels_bar_leaves_out_its_processs_suspensions():
    assert figures.ran(0, 10, []) == [(0, 10)]
    assert figures.ran(0, 10, [(2, 4), (6, 8)]) == [(0, 2), (4, 6), (8, 10)]
    assert figures.ran(0, 10, [(-5, 3), (9, 20)]) == [(3, 9)]
    assert figures.ran(2, 4, [(0, 10)]) == []
