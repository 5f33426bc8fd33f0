"""Issue 15's ordering check, shared by tests/bench/coll_auto.sh and collectives_grid.sh: among
algorithms measured more than 10% apart, how many pairs the model orders as measured."""


def ordered_pairs(table):
    """table: (measured, predicted, ...) per algorithm. Returns (agreeing pairs, pairs compared)."""
    agree = pairs = 0
    for i in range(len(table)):
        for j in range(i + 1, len(table)):
            m1, p1 = table[i][0], table[i][1]
            m2, p2 = table[j][0], table[j][1]
            if max(m1, m2) > 1.1 * min(m1, m2):
                pairs += 1
                agree += (p1 < p2) == (m1 < m2)
    return agree, pairs
