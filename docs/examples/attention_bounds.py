"""A theory file over the whole attention vocabulary, for `--theory` (docs/your-theorem.md, section 1):
logits and softmax (with a mask and a temperature), token states, a residual weight, the size n,
spectra, Doeblin's coefficient, an equality, a where= hypothesis and a doubly stochastic assumption.
Each true bound has a false variant filed as a conjecture (its counterexamples are findings).
"""
from theory import Theorem, register
from theory.expr import (A, I, Eq, col_min_sum, delta, exp, logits, n, norm_inf, parameter, ptp, slem, softmax,
                         spread, stochastic, tanh, tokens)

L, X, D = logits("L"), tokens("X"), stochastic("D")
alpha = parameter("alpha", 0, 1)

# logits: every entry of softmax(L) is at least exp(-ptp(L)) / n, so two rows overlap by exp(-ptp(L))
register(Theorem(id="att.softmax", title="softmax contracts by its logits' range", category="proved",
                 statement=delta(softmax(L)) <= 1 - exp(-ptp(L))))
register(Theorem(id="att.softmax.half", title="half the range suffices", category="conjecture",
                 statement=delta(softmax(L)) <= 1 - exp(-ptp(L) / 2)))
# Birkhoff's contraction coefficient: delta <= tanh(diameter / 4), the diameter at most 2 ptp(L)
register(Theorem(id="att.birkhoff", title="softmax and Birkhoff's coefficient", category="proved",
                 statement=delta(softmax(L)) <= tanh(ptp(L) / 2)))
# a causal mask and a temperature: column 0 keeps at least exp(-ptp(L) / 2) / n in every row
register(Theorem(id="att.causal", title="a causal head at temperature 2", category="proved",
                 statement=delta(softmax(L / 2, mask="causal")) <= 1 - exp(-ptp(L) / 2) / n))
# a where= hypothesis: logits within a range of 2
register(Theorem(id="att.bounded", title="bounded logits mix", category="proved",
                 statement=delta(softmax(L)) <= 1 - exp(-2), where=[ptp(L) <= 2]))

# token states: attention shrinks the oscillation of every feature by delta (Dobrushin)
register(Theorem(id="att.tokens", title="attention contracts the tokens' oscillation", category="proved",
                 statement=spread(A * X) <= delta(A) * spread(X)))
register(Theorem(id="att.tokens.half", title="and halves it", category="conjecture",
                 statement=spread(A * X) <= delta(A) * spread(X) / 2))

# a residual weight: the lazy version of A contracts by alpha + (1 - alpha) delta(A)
register(Theorem(id="att.lazy", title="a residual weight", category="proved",
                 statement=delta(alpha * I + (1 - alpha) * A) <= alpha + (1 - alpha) * delta(A)))
register(Theorem(id="att.lazy.guess", title="the residual costs nothing", category="conjecture",
                 statement=delta(alpha * I + (1 - alpha) * A) <= delta(A)))

# spectra, Doeblin, the size n, an equality, a doubly stochastic assumption
register(Theorem(id="att.slem", title="|lambda_2| <= delta", category="proved", statement=slem(A) <= delta(A)))
register(Theorem(id="att.doeblin", title="Doeblin's bound", category="proved",
                 statement=delta(A) <= 1 - col_min_sum(A)))
register(Theorem(id="att.rows", title="a product of stochastic matrices is stochastic", category="proved",
                 statement=Eq(norm_inf(A * D), 1)))
register(Theorem(id="att.transpose", title="D2 for A^T A", category="proved", assume=("doubly-stochastic",),
                 statement=delta(A.T * A) <= delta(A.T) * delta(A)))
