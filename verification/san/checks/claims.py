"""The paper's claims as objects: one :class:`Claim` per claim of the SAN abstract that the suite
tests, holding its registry id and instance, the paper's words and number, the test that decides it
(direction or equivalence margin), the runs it compares and what each outcome means in words.
The decisions are :mod:`verification.san.checks.decide`'s; the catalogue is :func:`catalogue`.

Every claim is a statistic of paired differences over seed pairs (both members of a pair share the
seed and the data order). Losses are nats per *byte*; the paper's numbers are nats per *token* of
another tokeniser, so they are compared in direction only. Claims (registry id, instance):

    san.claim.gap          depth / flops: L(SAN) - L(std) > 0 (paper: 0.47 / 0.26 nats per token)
                           params: |L(SAN) - L(std)| < MARGIN, TOST (paper: 0.006, "closes the gap")
                           reduction: gap(depth) - gap(params) > 0, the closing of the gap (0.47 -> 0.006)
                           flops-between: gap(depth) - gap(flops) > 0
    san.claim.probes       retrieval-<pair>: acc(SAN) - acc(std) > 0;  recall-<pair>: < 0
    san.claim.low_context  <pair>: (gap on the first ctx/8 positions) - (gap on the last half) > 0
    san.claim.spectra      routing-settles: late rank growth share, content minus routing, > 0
                           content-later: half-growth time of the threshold rank, W_V/W_O minus
                           W_Q/W_K (fractions of training), > 0: the paper's relative claim, routing
                           settles before content (every matrix gains rank from ~0 over training,
                           so "content ranks rise" alone is forced and is not tested)
                           rank-into-WO: threshold rank of W_O, SAN minus std at matched depth, > 0
    san.claim.qk_norm      L<d>: L(no QK-norm) - L(QK-norm) > 0 at depth d (one seed: no degrees of
                           freedom, so inconclusive and outside the Holm family)

>>> by = {c.key: c for c in catalogue((2, 8))}
>>> by[("gap", "params")].direction, by[("gap", "params")].margin, by[("qk_norm", "L8")].words
('equivalence', 0.02, '(the same, 8 layers)')
>>> by[("probes", "recall-depth")].roles, by[("gap", "depth")].reading("inconclusive")
(('std', 'san-depth'), 'undecided at this noise floor')
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

MARGIN = 0.02             # nats per byte: the equivalence margin of "matched parameters close the gap"
OUTCOMES = ("supported", "refuted", "inconclusive")
ALL_ROLES = ("std", "san-depth", "san-flops", "san-params")


@dataclass(frozen=True)
class Claim:
    """One claim: ``theorem`` (registry id) and ``instance``; the paper's ``words`` and ``number``
    ("-": it states none) and ``note`` (the number as the claim's record carries it, with how it is
    compared); this suite's ``design``; the test: ``direction`` ('>' or '<' than 0, or
    'equivalence': |mean| < ``margin``, TOST); the runs it compares (``roles``; ``over_trained``: a
    mean over the roles a preset trained, so a role not trained does not gate it); the words for
    each outcome (``readings``: supported, refuted, inconclusive); ``depth``: the QK-norm sweep's;
    ``probe``: a probe claim's probe (retrieval, recall)."""

    theorem: str
    instance: str
    words: str
    design: str
    roles: tuple
    number: str = "-"
    note: Optional[str] = None
    direction: str = ">"
    margin: Optional[float] = None
    readings: tuple = OUTCOMES
    over_trained: bool = False
    depth: Optional[int] = None
    probe: Optional[str] = None

    @property
    def kind(self) -> str:
        """The claim without its registry prefix: gap, probes, low_context, spectra, qk_norm."""
        return self.theorem.removeprefix("san.claim.")

    @property
    def key(self) -> tuple[str, str]:
        return (self.kind, self.instance)

    def reading(self, outcome: str) -> str:
        """The words for a decided or inconclusive ``outcome``."""
        return self.readings[OUTCOMES.index(outcome)]


GAP, PROBES, LOW, SPECTRA, QK = (f"san.claim.{k}" for k in ("gap", "probes", "low_context", "spectra", "qk_norm"))
DESIGNS = {GAP: "paired loss difference", PROBES: "paired probe accuracy; reference above chance",
           LOW: "paired loss difference, low-context positions", SPECTRA: "paired rank-growth times",
           QK: "one run with, one without QK-norm"}
_AHEAD = ("the standard model is ahead, the paper's direction",
          "the attention-only model is ahead, against the paper's direction", "undecided at this noise floor")
_RETRIEVES = ("the attention-only model retrieves better, the paper's direction",
              "the standard model retrieves better, against the paper's direction", "no difference is shown")
_RECALLS = ("the attention-only model recalls worse, the paper's direction",
            "the attention-only model recalls better, against the paper's direction", "no difference is shown")


def _claim(theorem: str, instance: str, words: str, roles: tuple, **kw) -> Claim:
    return Claim(theorem, instance, words, DESIGNS[theorem], roles, **kw)


def _pair_claims(pair: str) -> list[Claim]:
    """The probes and the low-context claim of the matched pair ``pair`` (params, depth)."""
    roles, same = ("std", f"san-{pair}"), pair == "depth"
    return [_claim(PROBES, f"retrieval-{pair}", "(the same probes at matched depth)" if same else
                   "attention-only models are better on context-grounded answers", roles, readings=_RETRIEVES,
                   probe="retrieval"),
            _claim(PROBES, f"recall-{pair}", "(the same probes at matched depth)" if same else
                   "... and worse where knowledge must come from weights", roles, direction="<", readings=_RECALLS,
                   probe="recall"),
            _claim(LOW, pair, "(the same at matched depth)" if same else
                   "the deficit concentrates on low-context query prediction", roles)]


CLAIMS: tuple[Claim, ...] = (
    _claim(GAP, "depth", "deleting feed-forward layers in place is costly: the standard transformer leads at "
           "matched depth", ("std", "san-depth"), number="0.47 nats/token",
           note="0.47 nats/token (direction only)", readings=_AHEAD),
    _claim(GAP, "flops", "... and at matched FLOPs", ("std", "san-flops"), number="0.26 nats/token",
           note="0.26 nats/token (direction only)", readings=_AHEAD),
    _claim(GAP, "params", "reallocating the freed budget into attention depth closes the gap: at matched "
           "parameters the difference is small", ("std", "san-params"), number="0.006 nats/token",
           note="0.006 nats/token (equivalence)", direction="equivalence", margin=MARGIN,
           readings=("equivalent within the margin: the gap is closed, as the paper reports",
                     "not equivalent: the gap exceeds the margin",
                     "neither shown equivalent within the margin nor shown to exceed it")),
    _claim(GAP, "reduction", "the gap shrinks from matched depth to matched parameters",
           ("std", "san-depth", "san-params"), number="0.47 to 0.006",
           note="0.47 -> 0.006 nats/token (direction only)",
           readings=("the gap shrinks from matched depth to matched parameters, the paper's direction",
                     "the gap grows from matched depth to matched parameters, against the paper",
                     "no change of the gap is shown")),
    _claim(GAP, "flops-between", "the gap at matched FLOPs lies between matched depth and matched parameters",
           ("std", "san-depth", "san-flops"), number="0.26", note="0.47 > 0.26 nats/token (direction only)"),
    *_pair_claims("params"), *_pair_claims("depth"),
    _claim(SPECTRA, "routing-settles", "routing matrices (Q/K) crystallize early", ALL_ROLES, over_trained=True),
    _claim(SPECTRA, "routing-settles-circuits", "(routing circuits settle early)", ALL_ROLES, over_trained=True),
    _claim(SPECTRA, "content-later", "content matrices accumulate rank slowly (later than routing)", ALL_ROLES,
           over_trained=True),
    _claim(SPECTRA, "rank-into-WO", "removing feed-forward layers relocates this accumulation to the attention "
           "output projection", ("std", "san-depth")),
)


def qk_norm(depth: int) -> Claim:
    """The QK-norm claim at ``depth`` attention-only layers (the sweep's two runs there)."""
    words = ("QK-normalization keeps attention-only stacks trainable" if depth == 2
             else f"(the same, {depth} layers)")
    return _claim(QK, f"L{depth}", words, (f"sweep-L{depth}", f"sweep-L{depth}-qk"),
                  number="48 layers" if depth == 2 else "-", depth=depth)


def catalogue(depths: tuple = ()) -> tuple[Claim, ...]:
    """Every claim, in the order they are decided and reported, with the QK-norm claim at each of
    the sweep's ``depths``."""
    return CLAIMS + tuple(qk_norm(d) for d in sorted(depths))
