"""Poincare constants of Gibbs measures of regularised losses (docs/theory.md §4).

mu_beta ~ exp(-beta F), F = L + lambda/2 |theta|^2. Poincare: Var_mu f <= C_P E_mu |grad f|^2;
C_P = 1/lambda_1 with lambda_1 the gap of -L, L f = Delta f - beta grad F . grad f.

Bounds checked against the true constant:
  Bakry-Emery     Hess(beta F) >= kappa I, kappa > 0      =>  C_P <= 1/kappa   (equality: Gaussian, f linear)
  Holley-Stroock  F = F0 + W, osc W <= w                  =>  C_P <= e^{beta w} C_P(F0);
                  with F0 = lambda/2 |theta|^2, W = L:        C_P <= e^{beta osc L} / (beta lambda)
  test functions  C_P >= Var_mu f / E_mu |grad f|^2 for every f (sanity)
  Villani         F -> oo, e^{-beta F} integrable, V = beta |grad F|^2 / 2 - Delta F -> +oo
                  => Poincare (constant not explicit); the seed paper's route for every lambda > 0.

Symbolic derivations (sympy, loss as an undefined function so they hold for any data):
* attn1 (theta = s, value fixed): L, L', L'' bounded, so V >= beta (lambda|s| - M1)^2 / 2 - M2 - lambda
  -> oo: Villani holds for every lambda > 0. A Hessian bound exists (L'' >= -m), Bakry-Emery needs
  lambda > m. Holley-Stroock holds for every lambda > 0 (L bounded).
* lora2 (theta = (b, c), L = L(p), p = b c): the identity
      V = r^2 [beta (L'(p)^2 + lambda^2)/2 - L''(p)] + 2 beta lambda p L'(p) - 2 lambda,  r^2 = b^2 + c^2,
  so V -> -oo along the hyperbola b c = p whenever beta lambda^2 / 2 < L''(p) - beta L'(p)^2 / 2:
  Villani fails for lambda < lambda_V(beta) = sqrt(max(0, sup_p (2 L''(p)/beta - L'(p)^2))).
  Hess L = L''(p) (c, b)(c, b)^T + L'(p) [[0,1],[1,0]] is unbounded below wherever L'' < 0 (which a
  bounded non-constant L must have somewhere): Bakry-Emery never applies. Holley-Stroock does.
* attn2 (theta = (s, v), L = v^2 m2(s)/2 - v m1(s) + m0): along s = s0 + t/v, v -> oo, with
  m2'(s0) = 0, V = v^2 [beta (m2''(s0) t/2 - m1'(s0))^2/2 + beta (lambda + m2(s0))^2/2 - m2''(s0)/2] + O(v),
  so Villani fails iff beta (lambda + m2(s0))^2 < m2''(s0) at a critical point s0 of m2:
  lambda_V(beta) = max over local minima s0 of m2 of sqrt(m2''(s0)/beta) - m2(s0).
  d^2 L/ds^2 = v^2 m2''/2 - v m1'' is unbounded below where m2'' < 0: no Bakry-Emery; L is
  unbounded in v: no Holley-Stroock with W = L. Only the truth and the lower bounds remain.

References:
[1] D. Bakry, M. Emery, Diffusions hypercontractives, 1985.
[2] R. Holley, D. Stroock, Logarithmic Sobolev inequalities and stochastic Ising models, 1987.
[3] C. Villani, Hypocoercivity, Mem. AMS 2009, section A.19 (the V -> oo criterion).
[4] Seed paper 1 (../shared/seeds): Poincare for every lambda > 0 for attention and LoRA losses.
"""
from __future__ import annotations


import sympy as sp

from theory.hypotheses import Hypotheses, check, hyp_all
from theory.registry import Theorem, register

beta, lam, kappa, C_P, w_osc = sp.symbols("beta lambda kappa C_P w", positive=True)
theta = sp.Symbol("theta", real=True)
_SYMS = {"beta": "inverse temperature", "lambda": "ridge strength", "kappa": "inf Hess(beta F)",
         "C_P": "Poincare constant of exp(-beta F)", "w": "oscillation bound of the bounded part W"}
_EVAL = "numerics.poincare.bounds"
# the setting every statement here is claimed in (Theorem.hypotheses_tex; each theorem adds its own)
_GIBBS = (r"$\mu \propto e^{-\beta F}$ on $\mathbb{R}^{d}$, $F = L + \tfrac{\lambda}{2} \lvert\theta\rvert^{2}$, "
          r"$\beta, \lambda > 0$, $e^{-\beta F}$ integrable, $C_P$ the Poincare constant of $\mu$")


# -- generic symbolic helpers ------------------------------------------------------------------------

def villani_quantity(F: sp.Expr, variables: list[sp.Symbol], b: sp.Expr = beta) -> sp.Expr:
    """V = b |grad F|^2 / 2 - Delta F."""
    grad = [sp.diff(F, x) for x in variables]
    return b * sum(g ** 2 for g in grad) / 2 - sum(sp.diff(F, x, 2) for x in variables)


def generator(f: sp.Expr, F: sp.Expr, variables: list[sp.Symbol], b: sp.Expr = beta) -> sp.Expr:
    """L f = Delta f - b grad F . grad f."""
    return sum(sp.diff(f, x, 2) - b * sp.diff(F, x) * sp.diff(f, x) for x in variables)


def gaussian_equality() -> dict[str, sp.Expr]:
    """Gaussian F = lambda/2 theta^2: theta is an eigenfunction of -L with eigenvalue beta lambda,
    Var_mu(theta) = 1/(beta lambda) = E|theta'|^2 / (beta lambda): C_P = 1/(beta lambda) = 1/kappa."""
    F = lam * theta ** 2 / 2
    Lf = sp.simplify(generator(theta, F, [theta]))
    eig = sp.simplify(-Lf / theta)
    dens = sp.exp(-beta * F)
    Z = sp.integrate(dens, (theta, -sp.oo, sp.oo))
    var = sp.simplify(sp.integrate(theta ** 2 * dens, (theta, -sp.oo, sp.oo)) / Z)
    kap = sp.diff(beta * F, theta, 2)
    return {"eigenvalue": eig, "variance": var, "kappa": kap, "rayleigh": sp.simplify(var / 1),
            "bakry_emery_bound": 1 / kap, "gap_equals_kappa": sp.simplify(eig - kap) == 0}


def villani_attn1() -> dict[str, sp.Expr]:
    """1-D: V(s) with L an undefined function; with |L'| <= M1, |L''| <= M2 the lower bound
    beta (lambda |s| - M1)^2 / 2 - M2 - lambda and its leading coefficient in s^2."""
    s = sp.Symbol("s", positive=True)  # s -> +oo (s -> -oo is symmetric)
    L = sp.Function("L")
    M1, M2 = sp.symbols("M1 M2", positive=True)
    V = villani_quantity(L(s) + lam * s ** 2 / 2, [s])
    lower = beta * (lam * s - M1) ** 2 / 2 - M2 - lam
    lead = sp.limit(lower / s ** 2, s, sp.oo)
    return {"V": sp.expand(V), "lower": lower, "leading": lead, "lambda_min": sp.Integer(0)}


def _flatten_derivatives(expr: sp.Expr, names: dict[int, sp.Symbol]) -> sp.Expr:
    """Replace L'(b c), L''(b c) (sympy Subs/Derivative objects) by plain symbols by order."""
    repl = {}
    for sub in expr.atoms(sp.Subs):
        repl[sub] = names[sub.expr.derivative_count]
    return expr.xreplace(repl)


def villani_lora2() -> dict[str, sp.Expr]:
    """The exact identity for V in the directional LoRA family and its coefficient of r^2."""
    b, c = sp.symbols("b c", real=True)
    d1, d2 = sp.symbols("Lp Lpp", real=True)      # L'(p), L''(p) at p = b c
    L = sp.Function("L")
    V = _flatten_derivatives(sp.expand(villani_quantity(L(b * c) + lam * (b ** 2 + c ** 2) / 2, [b, c])),
                             {1: d1, 2: d2})
    coef = beta * (d1 ** 2 + lam ** 2) / 2 - d2
    claimed = (b ** 2 + c ** 2) * coef + 2 * beta * lam * (b * c) * d1 - 2 * lam
    identity = sp.expand(V - claimed) == 0
    hess = sp.hessian(L(b * c), (b, c)).applyfunc(lambda e: _flatten_derivatives(sp.expand(e), {1: d1, 2: d2}))
    return {"V": V, "coefficient_r2": coef, "identity": identity,
            "lambda_min": sp.sqrt(sp.Max(0, sp.Symbol("K"))),   # K = sup_p (2 L''(p)/beta - L'(p)^2)
            "failure": sp.StrictLessThan(beta * lam ** 2 / 2, d2 - beta * d1 ** 2 / 2),
            "hessian": hess}


def villani_attn2() -> dict[str, sp.Expr]:
    """Leading v^2 coefficient of V along s = s0 + t/v at a critical point s0 of m2, minimised over t."""
    s, v, t = sp.symbols("s v t", real=True)
    m2, m1 = sp.Function("m2"), sp.Function("m1")
    m0 = sp.Symbol("m0")
    F = v ** 2 * m2(s) / 2 - v * m1(s) + m0 + lam * (s ** 2 + v ** 2) / 2
    V = villani_quantity(F, [s, v])
    # Taylor data at s0: m2(s0) = A0, m2'(s0) = 0, m2''(s0) = A2, m2'''(s0) = A3; m1: B0, B1, B2
    A0, A2, A3, B0, B1, B2, B3, A4 = sp.symbols("A0 A2 A3 B0 B1 B2 B3 A4", real=True)
    d = sp.Symbol("delta")
    m2_poly = A0 + A2 * d ** 2 / 2 + A3 * d ** 3 / 6 + A4 * d ** 4 / 24
    m1_poly = B0 + B1 * d + B2 * d ** 2 / 2 + B3 * d ** 3 / 6
    Vd = V.doit()
    sub = {}
    for k, (poly, fn) in enumerate(((m2_poly, m2), (m1_poly, m1))):
        for order in (2, 1):
            sub[sp.Derivative(fn(s), (s, order))] = sp.diff(poly, d, order)
        sub[fn(s)] = poly
    Vt = sp.expand(Vd.subs(sub).subs(d, t / v))
    lead = sp.expand(sp.limit(Vt / v ** 2, v, sp.oo))
    t_star = sp.solve(sp.diff(lead, t), t)[0]
    lead_min = sp.factor(sp.simplify(lead.subs(t, t_star)))
    return {"V": V, "leading_v2": lead, "t_star": t_star, "leading_min": lead_min,
            "failure": sp.StrictLessThan(beta * (lam + A0) ** 2, A2),
            "lambda_min": sp.sqrt(A2 / beta) - A0,
            "d2L_ds2": sp.diff(v ** 2 * m2(s) / 2 - v * m1(s), s, 2)}


def softmax_readout_derivatives(T: int = 3) -> dict[str, bool]:
    """The cumulant identities behind the certified attn1 constants (numerics.poincare.loss_bounds.attn1_certified):
    for g(s) = sum_j a_j u_j, a = softmax(s c), with g1, g2, g3 its first three derivatives in s,
        g1 = Cov_a(c, u),  g2 = E_a[(c - cbar)^2 (u - ubar)],
        g3 = E_a[(c - cbar)^3 (u - ubar)] - 3 Var_a(c) Cov_a(c, u),
    checked symbolically for T tokens with symbolic scores c and values u."""
    s = sp.Symbol("s", real=True)
    c = sp.symbols(f"c0:{T}", real=True)
    u = sp.symbols(f"u0:{T}", real=True)
    e = [sp.exp(s * cj) for cj in c]
    Z = sum(e)
    a = [ej / Z for ej in e]

    def E(xs):
        return sum(ai * xi for ai, xi in zip(a, xs))

    g = E(u)
    cb, ub = E(c), E(u)
    dc, du = [cj - cb for cj in c], [uj - ub for uj in u]
    cov = E([x * y for x, y in zip(dc, du)])
    var = E([x * x for x in dc])
    third = E([x * x * y for x, y in zip(dc, du)])
    fourth = E([x ** 3 * y for x, y in zip(dc, du)])
    checks = {"g1": sp.diff(g, s) - cov, "g2": sp.diff(g, s, 2) - third,
              "g3": sp.diff(g, s, 3) - (fourth - 3 * var * cov)}
    return {k: sp.simplify(sp.together(v)) == 0 for k, v in checks.items()}


# -- hypotheses on instances (dicts with beta, lam, kappa, osc), each a Hypotheses(ok, reason) --------

def _positive(inst: dict, name: str) -> Hypotheses:
    """``inst[name] > 0``: False if missing or <= 0, undecided (ok None) for a symbolic value."""
    x = inst.get(name)
    if x is None:
        return Hypotheses(False, f"{name} must be given (> 0), it is missing")
    try:
        gt = x > 0
    except TypeError:
        return Hypotheses(False, f"{name} must be a real number > 0, got {x!r}")
    if isinstance(gt, sp.Basic) and gt not in (sp.true, sp.false):
        return Hypotheses(None, f"undecided: cannot tell whether {name} = {x} > 0")
    return check(gt, f"{name} must be > 0, got {x}")


def _be_hypotheses(inst: dict) -> Hypotheses:
    """beta, lam > 0 and a Hessian lower bound kappa > 0 (undecided when kappa and hessian_bounded
    are both missing; False when hessian_bounded is given without kappa)."""
    k = inst.get("kappa")
    if k is None:
        hb = inst.get("hessian_bounded")
        kappa = (Hypotheses(None, "undecided: kappa (inf Hess(beta F)) and hessian_bounded not given")
                 if hb is None else
                 Hypotheses(False, f"kappa must be given (> 0) for Bakry-Emery, it is missing "
                                   f"(hessian_bounded = {hb!r})"))
    else:
        kappa = _positive(inst, "kappa")
    return hyp_all(_positive(inst, "beta"), _positive(inst, "lam"), kappa)


def _hs_hypotheses(inst: dict) -> Hypotheses:
    """beta, lam > 0 and an oscillation bound osc of L."""
    return hyp_all(_positive(inst, "beta"), _positive(inst, "lam"),
                   check(inst.get("osc") is not None,
                         "osc (a bound on osc L) must be given, it is missing"))


def _basic_hypotheses(inst: dict) -> Hypotheses:
    """beta, lam > 0."""
    return hyp_all(_positive(inst, "beta"), _positive(inst, "lam"))


def _gaussian_witness() -> dict:
    return {"family": "gauss1", "beta": sp.Rational(3), "lam": sp.Rational(1, 2),
            "kappa": sp.Rational(3, 2), "osc": 0, "C_P": sp.Rational(2, 3)}


BAKRY_EMERY = register(Theorem(
    id="poincare.gibbs.bakry_emery", title="Bakry-Emery curvature bound",
    category="proved", statement=sp.Implies(sp.GreaterThan(kappa, 0), sp.LessThan(C_P, 1 / kappa)),
    hypotheses_tex=_GIBBS + (r", $\kappa$ the infimum over $\theta$ of the least eigenvalue of "
                             r"$\operatorname{Hess}(\beta F)$"),
    equality="Gaussian F = lambda/2 |theta|^2 (kappa = beta lambda), attained by linear f",
    equality_tex=r"the Gaussian $F = \tfrac{\lambda}{2} \lvert\theta\rvert^{2}$ ($\kappa = \beta\lambda$), "
                 r"attained by linear $f$",
    hypotheses=_be_hypotheses, witness=_gaussian_witness,
    evaluators={"fast": f"{_EVAL}:bakry_emery", "exact": f"{_EVAL}:bakry_emery_exact"},
    references=("[1] Bakry & Emery 1985",), symbols=_SYMS))

HOLLEY_STROOCK = register(Theorem(
    id="poincare.gibbs.holley_stroock",
    title="Holley-Stroock perturbation of the ridge Gaussian",
    category="proved",
    statement=sp.LessThan(C_P, sp.exp(beta * w_osc) / (beta * lam)),
    hypotheses_tex=_GIBBS + r", $L$ bounded with $\operatorname{osc} L \le w$",
    equality="osc L = 0 (L constant): the Gaussian, bound 1/(beta lambda) attained",
    equality_tex=r"$\operatorname{osc} L = 0$ ($L$ constant): the Gaussian, where the bound $1/(\beta\lambda)$ "
                 "is attained",
    hypotheses=_hs_hypotheses, witness=_gaussian_witness,
    evaluators={"fast": f"{_EVAL}:holley_stroock", "exact": f"{_EVAL}:holley_stroock_exact"},
    references=("[2] Holley & Stroock 1987",), symbols=_SYMS))

_f_var, _f_dir = sp.symbols("Var_mu_f E_mu_gradf2", positive=True)
TEST_FUNCTION = register(Theorem(
    id="poincare.gibbs.test_function_lower", title="Test-function lower bound",
    category="sanity", statement=sp.GreaterThan(C_P, _f_var / _f_dir),
    hypotheses_tex=_GIBBS + r", $f$ any smooth function with $0 < \mathbb{E}_{\mu}\|\nabla f\|^{2} < \infty$",
    equality="f the first eigenfunction of -L (for the Gaussian: f = theta)",
    equality_tex=r"$f$ the first eigenfunction of $-\mathcal{L}$ (for the Gaussian: $f = \theta$)",
    hypotheses=_basic_hypotheses, witness=_gaussian_witness,
    evaluators={"fast": f"{_EVAL}:test_function_lower", "exact": f"{_EVAL}:test_function_lower_exact"},
    references=("definition of C_P",), symbols=_SYMS))

_V = sp.Function("V")
VILLANI = register(Theorem(
    id="poincare.gibbs.villani",
    title="Villani's condition for every positive ridge (seed claim)",
    category="conjecture",
    statement=sp.Implies(sp.StrictGreaterThan(lam, 0), sp.Eq(sp.Limit(_V(theta), theta, sp.oo), sp.oo)),
    hypotheses_tex=_GIBBS + (r", $V = \tfrac{\beta}{2} \lvert\nabla F\rvert^{2} - \Delta F$ as "
                             r"$\lvert\theta\rvert \to \infty$"),
    equality="not an inequality: the check is whether V -> +oo; where it fails the table reports the "
             "region (lambda < lambda_V(beta)) and the bounds that still hold there",
    equality_tex=r"not an inequality: the check is whether $V \to +\infty$; where it fails, the table reports the "
                 r"region $\lambda < \lambda_V(\beta)$ and the bounds that still hold there",
    hypotheses=_basic_hypotheses, witness=_gaussian_witness,
    evaluators={"fast": f"{_EVAL}:villani_check", "exact": f"{_EVAL}:villani_check_exact"},
    references=("[3] Villani 2009, A.19", "[4] seed paper 1"), symbols=_SYMS))

_r_sde, _EL, _LF = sp.symbols("r_SDE E_beta_L L_theta_star", positive=True)
LANGEVIN_RATE = register(Theorem(
    id="poincare.langevin.rate",
    title="Spectral gap of the Langevin dynamics",
    category="statistical", statement=sp.Eq(_r_sde, 1 / (beta * C_P)),
    hypotheses_tex=_GIBBS + (r", $r_{\mathrm{SDE}}$ the exponential decay rate of the Langevin dynamics "
                             r"$d\theta = -\nabla F\,dt + \sqrt{2/\beta}\,dB$"),
    equality="always: the generator is (1/beta) L; the slowest eigenfunction decays at exactly this rate",
    equality_tex=r"always: the generator of $d\theta = -\nabla F\,dt + \sqrt{2/\beta}\,dB$ is "
                 r"$\tfrac{1}{\beta}\mathcal{L}$, and its slowest eigenfunction decays at exactly this rate",
    hypotheses=_basic_hypotheses, witness=_gaussian_witness,
    evaluators={"fast": "numerics.poincare.langevin:decay_rate", "exact": "numerics.poincare.langevin:predicted_rate"},
    references=("docs/theory.md §4",), symbols=_SYMS))

EXPECTED_LOSS = register(Theorem(
    id="poincare.langevin.expected_loss",
    title="Excess loss of the Langevin dynamics against the Laplace curve",
    category="statistical",
    statement=sp.LessThan(sp.Symbol("E_beta_L") - sp.Symbol("L_inf"), sp.Symbol("d") / (2 * sp.Symbol("beta"))),
    hypotheses_tex=_GIBBS + (r", $\mathbb{E}_{\mu_{\beta}}[L]$ estimated from the Langevin dynamics, "
                             r"$L_{\inf} = \inf L$, $d$ the dimension of $\theta$"),
    equality="beta -> oo (Laplace: E[F] - F* ~ dim / (2 beta)); E_beta[L] -> L(theta*_lambda) >= inf L, so the "
             "excess tends to the regularisation gap L(theta*_lambda) - inf L, not to 0",
    equality_tex=r"as $\beta \to \infty$ (Laplace: $\mathbb{E}[F] - F^{*} \sim \dim/(2\beta)$); "
                 r"$\mathbb{E}_{\mu_{\beta}}[L] \to L(\theta^{*}_{\lambda}) \ge \inf L$, so the excess tends to the "
                 r"regularisation gap $L(\theta^{*}_{\lambda}) - \inf L$, not to $0$",
    hypotheses=_basic_hypotheses, witness=_gaussian_witness,
    evaluators={"fast": "numerics.poincare.langevin:simulate", "exact": "numerics.poincare.langevin:simulate"},
    references=("[4] seed paper 1: the SDE minimises the regularised loss",), symbols=_SYMS))

MINIMISES_F = register(Theorem(
    id="poincare.langevin.minimises_F",
    title="The Langevin dynamics minimise the regularised loss F (Laplace scale)",
    category="statistical",
    statement=sp.And(sp.LessThan(sp.Symbol("E_beta_F") - sp.Symbol("F_min"), sp.Symbol("d") / (2 * beta)),
                     sp.LessThan(sp.Symbol("E_beta_dist2"), sp.Symbol("tr_H_inv") / beta)),
    hypotheses_tex=_GIBBS + (r", $F_{\min} = F(\theta^{*}_{\lambda})$ at the minimiser $\theta^{*}_{\lambda}$ of $F$ "
                             r"(found by L-BFGS), $H = \nabla^{2} F(\theta^{*}_{\lambda}) \succ 0$, "
                             r"$\mathbb{E}_{\beta}$ over the Langevin iterates, "
                             r"$\mathrm{dist}^{2} = \lvert\theta - \theta^{*}_{\lambda}\rvert^{2}$, $d$ the dimension"),
    equality="beta -> oo (Laplace: E[F] - F_min ~ d/(2 beta), E|theta - theta*|^2 ~ tr(H^-1)/beta); the SDE "
             "samples exp(-beta F), which concentrates at argmin F, so F (not L) is what it minimises",
    equality_tex=r"as $\beta \to \infty$ (Laplace: $\mathbb{E}[F] - F_{\min} \sim d/(2\beta)$, "
                 r"$\mathbb{E}\lvert\theta - \theta^{*}_{\lambda}\rvert^{2} \sim \operatorname{tr}(H^{-1})/\beta$); "
                 r"the SDE samples $e^{-\beta F}$, which concentrates at $\operatorname{argmin} F$",
    hypotheses=_basic_hypotheses, witness=_gaussian_witness,
    evaluators={"fast": "numerics.poincare.langevin:simulate", "exact": "numerics.poincare.langevin:simulate"},
    references=("[4] seed paper 1: the SDE minimises the regularised loss",), symbols=_SYMS))
