(* Row-stochastic matrices and the Dobrushin coefficient over any realFieldType  *)
(* (docs/theory.md, section 1):                                                *)
(*   delta(A) = max_{i,j} (1/2) ||A_i - A_j||_1 = 1 - min_{i,j} sum_k min(A_ik, A_jk). *)
(*                                                                             *)
(*  row_stochastic A == every entry of A is nonnegative and every row sums to 1 *)
(*         tv A i j == (1/2) sum_k |A i k - A j k|, the total variation        *)
(*                     distance of the rows i and j                            *)
(*          delta A == the maximum of tv A i j over all pairs of rows; the     *)
(*                     maximum is seeded with 0, so delta A = 0 when A has no  *)
(*                     row (n = 0), and delta A = 0 when n = 1 (tv A i i = 0)  *)
(*  delta_nat n m f == the same maximum with nat indices, which vm_compute     *)
(*                     evaluates on rat (delta_natE: the delta of              *)
(*                     \matrix_(i < n, k < m) f i k)                           *)
(*     pos x, neg x == the positive and negative parts max(x, 0), max(-x, 0)   *)
(* The lemmas named in the suite: tv_min (row total variation as 1 - sum of    *)
(* minima) and sum_norm_pos (the sign split of a zero-sum vector).             *)

From mathcomp Require Import all_ssreflect all_algebra.

Set Implicit Arguments.
Unset Strict Implicit.
Unset Printing Implicit Defensive.

Import GRing.Theory Num.Theory Order.TTheory.
Local Open Scope ring_scope.

Section BigMax.
(* A finite maximum seeded with 0.                                             *)
Variables (R : realDomainType) (I : finType).
Implicit Types (F : I -> R) (c : R).

Lemma bigmax_ge0 F : 0 <= \big[Num.max/0]_i F i.
Proof.
by apply: (big_rec (fun x => 0 <= x)) => // i x _ x0; rewrite le_maxr x0 orbT.
Qed.

Lemma le_bigmax F i : F i <= \big[Num.max/0]_j F j.
Proof.
have : i \in index_enum I by rewrite mem_index_enum.
elim: (index_enum I) => // x r IH; rewrite inE big_cons /= => /orP[/eqP->|/IH h].
  by rewrite le_maxr lexx.
by rewrite le_maxr h orbT.
Qed.

Lemma bigmax_le F c : 0 <= c -> (forall i, F i <= c) -> \big[Num.max/0]_i F i <= c.
Proof. by move=> c0 Fc; elim/big_ind: _ => // x y xc yc; rewrite le_maxl xc. Qed.

(* The maximum is 0 or one of the values.                                      *)
Lemma bigmax_attained F :
  \big[Num.max/0]_i F i = 0 \/ exists i, F i = \big[Num.max/0]_j F j.
Proof.
apply: (big_rec (fun x => x = 0 \/ exists i, F i = x)) => [|i x _ [->|[k <-]]].
- by left.
- by rewrite maxEle; case: ifP => _; [left | right; exists i].
by rewrite maxEle; case: ifP => _; right; [exists k | exists i].
Qed.

End BigMax.

Section Definitions.
Variable R : realFieldType.

Definition row_stochastic n m (A : 'M[R]_(n, m)) :=
  (forall i k, 0 <= A i k) /\ (forall i, \sum_k A i k = 1).

Definition tv n m (A : 'M[R]_(n, m)) (i j : 'I_n) :=
  2%:R^-1 * \sum_k `|A i k - A j k|.

Definition delta n m (A : 'M[R]_(n, m)) :=
  \big[Num.max/0]_(i < n) \big[Num.max/0]_(j < n) tv A i j.

Definition delta_nat n m (f : nat -> nat -> R) :=
  \big[Num.max/0]_(0 <= i < n) \big[Num.max/0]_(0 <= j < n)
     (2%:R^-1 * \sum_(0 <= k < m) `|f i k - f j k|).

Definition pos (x : R) := Num.max x 0.
Definition neg (x : R) := Num.max (- x) 0.

End Definitions.

(* The computable form: delta of a matrix given by a function of nat indices. *)
Lemma delta_natE (R : realFieldType) n m (f : nat -> nat -> R) :
  delta (\matrix_(i < n, k < m) f i k) = delta_nat n m f.
Proof.
rewrite /delta_nat big_mkord; apply: eq_bigr => i _.
rewrite big_mkord; apply: eq_bigr => j _.
by rewrite /tv big_mkord; congr (_ * _); apply: eq_bigr => k _; rewrite !mxE.
Qed.

Section Halves.
Variable R : realFieldType.
Implicit Types x y : R.

Lemma two_neq0 : (2%:R : R) != 0. Proof. by rewrite pnatr_eq0. Qed.

Lemma half_gt0 : 0 < (2%:R : R)^-1. Proof. by rewrite invr_gt0 ltr0n. Qed.

Lemma half_ge0 : 0 <= (2%:R : R)^-1. Proof. exact: ltW half_gt0. Qed.

(* 1/2 * (2 x) = x and 2 (x/2) = x                                            *)
Lemma halfMn2 x : 2%:R^-1 * (x *+ 2) = x.
Proof. by rewrite -[x *+ 2]mulr_natl mulrA mulVf ?two_neq0 ?mul1r. Qed.

Lemma halfK x : (2%:R^-1 * x) *+ 2 = x.
Proof. by rewrite -[(_ * x) *+ 2]mulr_natl mulrA mulfV ?two_neq0 ?mul1r. Qed.

(* 1/2 (2 + x) = 1 + x/2                                                       *)
Lemma half_addn2 x : 2%:R^-1 * (2%:R + x) = 1 + 2%:R^-1 * x.
Proof. by rewrite mulrDr mulVf ?two_neq0. Qed.

Lemma half_sum_norm_ge0 (I : finType) (F : I -> R) : 0 <= 2%:R^-1 * \sum_k `|F k|.
Proof. by rewrite mulr_ge0 ?half_ge0 // sumr_ge0. Qed.

(* |x - y| = x + y - 2 min(x, y)                                              *)
Lemma norm_sub_min x y : `|x - y| = x + y - (Num.min x y) *+ 2.
Proof.
have [xy|yx] := leP x y.
  by rewrite ler0_norm ?subr_le0 // opprB mulr2n opprD addrACA subrr add0r.
by rewrite gtr0_norm ?subr_gt0 // mulr2n opprD addrACA subrr addr0.
Qed.

Lemma pos_ge0 x : 0 <= pos x. Proof. by rewrite /pos le_maxr lexx orbT. Qed.

Lemma neg_ge0 x : 0 <= neg x. Proof. by rewrite /neg le_maxr lexx orbT. Qed.

(* x = x^+ - x^-                                                               *)
Lemma pos_subr_neg x : pos x - neg x = x.
Proof.
rewrite /pos /neg; have [x0|x0] := leP 0 x.
  by rewrite max_r ?oppr_le0 // subr0.
by rewrite max_l ?oppr_ge0 ?ltW // sub0r opprK.
Qed.

(* |x| = x^+ + x^-                                                             *)
Lemma pos_addr_neg x : pos x + neg x = `|x|.
Proof.
rewrite /pos /neg; have [x0|x0] := leP 0 x.
  by rewrite max_r ?oppr_le0 // addr0 ger0_norm.
by rewrite max_l ?oppr_ge0 ?ltW // add0r ltr0_norm.
Qed.

(* The sign split of a zero-sum vector v: its positive and negative parts     *)
(* carry the same mass, half of ||v||_1.                                      *)
Lemma sum_pos_neg (I : finType) (v : I -> R) :
  \sum_k v k = 0 -> \sum_k pos (v k) = \sum_k neg (v k).
Proof.
move=> v0; apply/eqP; rewrite -subr_eq0 -sumrB.
by under eq_bigr do rewrite pos_subr_neg; rewrite v0.
Qed.

Lemma sum_norm_pos (I : finType) (v : I -> R) :
  \sum_k v k = 0 -> \sum_k `|v k| = (\sum_k pos (v k)) *+ 2.
Proof.
move=> v0; rewrite mulr2n {2}(sum_pos_neg v0) -big_split /=.
by apply: eq_bigr => k _; rewrite pos_addr_neg.
Qed.

(* Equal sums of pointwise ordered terms are equal termwise.                   *)
Lemma ler_sum_eq (I : finType) (F G : I -> R) :
  (forall k, F k <= G k) -> \sum_k F k = \sum_k G k -> forall k, F k = G k.
Proof.
move=> FG e k; have Z := @psumr_eq0P _ _ predT (fun k => G k - F k).
have {}Z := Z (fun l _ => ltac:(by rewrite subr_ge0 FG)).
by apply/eqP; rewrite eq_sym -subr_eq0 Z // sumrB e subrr.
Qed.

(* |y + x| = |y| + |x| with 0 < y forces 0 <= x.                               *)
Lemma norm_add_eq_ge0 y x : 0 < y -> `|y + x| = `|y| + `|x| -> 0 <= x.
Proof.
move=> y0 e; rewrite leNgt; apply/negP => x0.
have : `|y + x| < `|y| + `|x|.
  rewrite (gtr0_norm y0) (ltr0_norm x0) ltr_norml opprB; apply/andP; split.
    by rewrite [y + x]addrC ltr_add2l (lt_trans _ y0) ?oppr_lt0.
  by rewrite ltr_add2l (lt_trans x0) ?oppr_gt0.
by rewrite e ltxx.
Qed.

End Halves.

Arguments two_neq0 {R}.
Arguments half_gt0 {R}.
Arguments half_ge0 {R}.

Section RowDistance.
Variables (R : realFieldType) (n m : nat).
Implicit Type A : 'M[R]_(n, m).

Lemma tv_ge0 A i j : 0 <= tv A i j.
Proof. exact: half_sum_norm_ge0. Qed.

Lemma tv_xx A i : tv A i i = 0.
Proof. by rewrite /tv big1 ?mulr0 // => k _; rewrite subrr normr0. Qed.

Lemma tv_sym A i j : tv A i j = tv A j i.
Proof. by rewrite /tv; congr (_ * _); apply: eq_bigr => k _; rewrite distrC. Qed.

(* Row total variation as 1 - sum of minima, for rows summing to 1.            *)
Lemma tv_min A i j : (forall i, \sum_k A i k = 1) ->
  tv A i j = 1 - \sum_k Num.min (A i k) (A j k).
Proof.
move=> rs; rewrite /tv; under eq_bigr do rewrite norm_sub_min.
by rewrite sumrB big_split /= !rs sumrMnl -[1 + 1]mulr2n -mulrnBl halfMn2.
Qed.

Lemma delta_ge0 A : 0 <= delta A.
Proof. exact: bigmax_ge0. Qed.

Lemma tv_le_delta A i j : tv A i j <= delta A.
Proof.
apply: le_trans (le_bigmax (fun i => \big[Num.max/0]_(j < n) tv A i j) i).
exact: (le_bigmax (fun j => tv A i j)).
Qed.

Lemma delta_le A c : 0 <= c -> (forall i j, tv A i j <= c) -> delta A <= c.
Proof. by move=> c0 h; apply: bigmax_le => // i; apply: bigmax_le. Qed.

(* delta is attained: it is 0, or tv A i j for some pair.                     *)
Lemma delta_attained A : delta A = 0 \/ exists i j, tv A i j = delta A.
Proof.
rewrite /delta.
case: (bigmax_attained (fun i => \big[Num.max/0]_(j < n) tv A i j)) => [->|[i Ei]].
  by left.
case: (bigmax_attained (fun j => tv A i j)) => [E0|[j Ej]].
  by left; rewrite -Ei E0.
by right; exists i, j; rewrite Ej Ei.
Qed.

End RowDistance.
