"""A theory file about what a trained model computes, for `attnbounds rollout --check`
(docs/your-theorem.md, section 4): bounds over a head's pre-softmax scores L, over its layer's input
hidden states X, and over two consecutive layers' attention (A at layer l, B at layer l + 1).
"""
from theory import Theorem, register
from theory.expr import A, B, delta, exp, logits, ptp, softmax, spread, tokens

L, X = logits("L"), tokens("X")

# every entry of softmax(L) is at least exp(-ptp(L)) / n, so two rows overlap by at least exp(-ptp(L))
register(Theorem(id="model.softmax", title="softmax contracts by its logits' range", category="proved",
                 statement=delta(softmax(L)) <= 1 - exp(-ptp(L))))

# attention shrinks the oscillation of every feature of the layer's input by delta (Dobrushin)
register(Theorem(id="model.tokens", title="attention contracts the tokens' oscillation", category="proved",
                 statement=spread(A * X) <= delta(A) * spread(X)))

# Theorem D2 on two consecutive layers of the same head
register(Theorem(id="model.chain", title="two layers contract by the product", category="proved",
                 statement=delta(B * A) <= delta(A) * delta(B)))
