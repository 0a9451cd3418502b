(* The causal D2 corollary (docs/theory.md, section 1, Corollary (causal     *)
(* D2)): for lower-triangular row-stochastic n x n P and Q (n >= 2), with     *)
(* p = min_{l>=1} P_l0 and q = min_{l>=1} Q_l0 (so delta(P) = 1 - p and        *)
(* delta(Q) = 1 - q, causal_delta_max),                                        *)
(*   delta(PQ) = delta(P) delta(Q)  iff  p = 1, or q = 1, or some row l >= 1   *)
(*   has P_l0 = p and Q_k0 = q for every k >= 1 with P_lk > 0.                 *)
(* Stated with delta: P_l0 = p iff d_0l(P) = delta(P), Q_k0 = q iff            *)
(* d_0k(Q) = delta(Q), and p = 1 iff delta(P) = 0 (causal_d2_condition).       *)
(* Proof (direct, every n): PQ is causal and row-stochastic, so delta(PQ) is   *)
(* attained by a pair (0, l), l != 0, and for every l                          *)
(*   d_0l(PQ) = 1 - (PQ)_l0 = sum_k P_lk d_0k(Q) <= (1 - P_l0) delta(Q)        *)
(*            = d_0l(P) delta(Q) <= delta(P) delta(Q);                          *)
(* equality in both steps is the condition for l.                              *)
(* Main results: d2_causal (with delta), d2_causal_first_column (with p, q);  *)
(* causal_mul (PQ is causal), causal_delta_max, causal_first_col_min.         *)

From mathcomp Require Import all_ssreflect all_algebra.
From AttnBounds Require Import stochastic dobrushin causal product.

Set Implicit Arguments.
Unset Strict Implicit.
Unset Printing Implicit Defensive.

Import GRing.Theory Num.Theory Order.TTheory.
Local Open Scope ring_scope.

Section CausalProduct.
Variables (R : realFieldType) (n : nat).
Implicit Types P Q : 'M[R]_n.+2.

Lemma causal_mul P Q : lower_triangular P -> lower_triangular Q -> lower_triangular (P *m Q).
Proof.
move=> lP lQ i k ik; rewrite mxE big1 // => j _.
have [ij|ji] := ltnP i j; first by rewrite lP ?mul0r.
by rewrite lQ ?mulr0 // (leq_ltn_trans ji ik).
Qed.

(* delta(A) = max_l d_0l(A) = max_l (1 - A_l0) for causal A.                   *)
Lemma causal_delta_max (A : 'M[R]_n.+2) : row_stochastic A -> lower_triangular A ->
  delta A = \big[Num.max/0]_l (1 - A l ord0).
Proof.
move=> st lt; under eq_bigr do rewrite -(causal_tv0 st lt).
apply/eqP; rewrite eq_le; apply/andP; split.
  apply: delta_le => [|i j]; first exact: bigmax_ge0.
  apply: le_trans (causal_tv_le st lt i j) _.
  by rewrite le_maxl; apply/andP; split; exact: (le_bigmax (fun l => tv A ord0 l)).
by apply: bigmax_le => [|l]; [exact: delta_ge0 | exact: tv_le_delta].
Qed.

Definition causal_d2_condition P Q :=
  [\/ delta P = 0, delta Q = 0 |
   exists2 l, l != ord0 &
     tv P ord0 l = delta P /\ forall k, k != ord0 -> 0 < P l k -> tv Q ord0 k = delta Q].

Section Fixed.
Variables P Q : 'M[R]_n.+2.
Hypotheses (sP : row_stochastic P) (sQ : row_stochastic Q).
Hypotheses (lP : lower_triangular P) (lQ : lower_triangular Q).

(* d_0l(PQ) = 1 - (PQ)_l0 = sum_k P_lk d_0k(Q)                                  *)
Lemma causal_mul_tv0 l : tv (P *m Q) ord0 l = \sum_k P l k * tv Q ord0 k.
Proof.
have [_ rP] := sP.
rewrite (causal_tv0 (mul_stochastic sP sQ) (causal_mul lP lQ)) mxE.
under [RHS]eq_bigr do rewrite (causal_tv0 sQ lQ) mulrBr mulr1.
by rewrite sumrB rP.
Qed.

(* sum_k P_lk d_0k(Q) <= (1 - P_l0) delta(Q) = d_0l(P) delta(Q), termwise      *)
Definition off0 (b : R) (k : 'I_n.+2) := if k == ord0 then 0 else b.

Lemma causal_term_le l k : P l k * tv Q ord0 k <= P l k * off0 (delta Q) k.
Proof.
have [nP _] := sP; rewrite /off0; case: eqP => [->|_].
  by rewrite tv_xx.
by rewrite ler_wpmul2l ?nP ?tv_le_delta.
Qed.

Lemma causal_sum_off0 l : \sum_k P l k * off0 (delta Q) k = tv P ord0 l * delta Q.
Proof.
have [_ rP] := sP.
rewrite (causal_tv0 sP lP) -(rP l) (bigD1 ord0) //= /off0 eqxx mulr0 add0r.
rewrite [in RHS](bigD1 ord0) //= [P l ord0 + _]addrC addrK mulr_suml.
by apply: eq_bigr => k /negbTE ->.
Qed.

Lemma causal_mul_tv0_le l : tv (P *m Q) ord0 l <= tv P ord0 l * delta Q.
Proof.
rewrite causal_mul_tv0 -causal_sum_off0.
by apply: ler_sum => k _; exact: causal_term_le.
Qed.

Theorem d2_causal_sufficient : causal_d2_condition P Q -> delta (P *m Q) = delta P * delta Q.
Proof.
have D2 := d2_bound sP sQ.
case=> [P0|Q0|[l l0 [tvl cond]]].
- by apply/eqP; rewrite eq_le D2 P0 mul0r delta_ge0.
- by apply/eqP; rewrite eq_le D2 Q0 mulr0 delta_ge0.
apply/eqP; rewrite eq_le D2 /= -tvl -causal_sum_off0.
apply: le_trans (tv_le_delta _ ord0 l); rewrite causal_mul_tv0 le_eqVlt; apply/orP; left.
apply/eqP; apply: eq_bigr => k _; rewrite /off0.
case: eqP => [->|/eqP k0]; first by rewrite tv_xx.
have [nP _] := sP; have := nP l k; rewrite le_eqVlt => /orP[/eqP <-|Pk].
  by rewrite !mul0r.
by rewrite cond.
Qed.

Theorem d2_causal_necessary : delta (P *m Q) = delta P * delta Q -> causal_d2_condition P Q.
Proof.
move=> e; have [P0|P0] := eqVneq (delta P) 0; first by constructor 1.
have [Q0|Q0] := eqVneq (delta Q) 0; first by constructor 2.
constructor 3.
have [l l0 tvl] := causal_delta_first (mul_stochastic sP sQ) (causal_mul lP lQ).
(* ab = d_0l(PQ) <= d_0l(P) b <= ab *)
have le1 := causal_mul_tv0_le l; rewrite tvl e in le1.
have tvP : tv P ord0 l = delta P.
  apply/eqP; rewrite eq_le tv_le_delta /=.
  by move: le1; rewrite ler_pmul2r // lt_def Q0 delta_ge0.
exists l => //; split => // k k0 Pk.
have sum_eq : \sum_k P l k * tv Q ord0 k = \sum_k P l k * off0 (delta Q) k.
  by rewrite -causal_mul_tv0 causal_sum_off0 tvl e tvP.
have := ler_sum_eq (causal_term_le l) sum_eq k; rewrite /off0 (negbTE k0).
by move/(mulfI (lt0r_neq0 Pk)).
Qed.

End Fixed.

(* The causal D2 corollary (theory/dobrushin.py: dobrushin.product.causal).   *)
Theorem d2_causal P Q : row_stochastic P -> row_stochastic Q ->
  lower_triangular P -> lower_triangular Q ->
  delta (P *m Q) = delta P * delta Q <-> causal_d2_condition P Q.
Proof.
move=> sP sQ lP lQ.
by split; [exact: d2_causal_necessary | exact: d2_causal_sufficient].
Qed.

(* The suite's form: with p = 1 - delta(P) and q = 1 - delta(Q), which are    *)
(* min_{l>=1} P_l0 and min_{l>=1} Q_l0 (causal_first_col_min),                 *)
(*   delta(PQ) = delta(P) delta(Q)  iff  p = 1, or q = 1, or some l >= 1 has   *)
(*   P_l0 = p and Q_k0 = q for every k >= 1 with P_lk > 0.                     *)
Lemma sub1_eq (x y : R) : (1 - x = y) <-> (x = 1 - y).
Proof. by split=> [<-|->]; rewrite opprB addrC subrK. Qed.

Lemma ler_sub1 (x y : R) : (1 - x <= y) = (1 - y <= x).
Proof. by rewrite ler_subl_addr addrC -ler_subl_addr. Qed.

Lemma causal_first_col_min (A : 'M[R]_n.+2) : row_stochastic A -> lower_triangular A ->
  (forall l, 1 - delta A <= A l ord0) /\ exists2 l, l != ord0 & A l ord0 = 1 - delta A.
Proof.
move=> st lt; split=> [l|].
  by rewrite ler_sub1 -(causal_tv0 st lt) tv_le_delta.
have [l l0 tvl] := causal_delta_first st lt.
by exists l => //; apply/sub1_eq; rewrite -(causal_tv0 st lt).
Qed.

Theorem d2_causal_first_column P Q : row_stochastic P -> row_stochastic Q ->
  lower_triangular P -> lower_triangular Q ->
  let p := 1 - delta P in let q := 1 - delta Q in
  delta (P *m Q) = delta P * delta Q <->
  [\/ p = 1, q = 1 |
   exists2 l, l != ord0 &
     P l ord0 = p /\ forall k, k != ord0 -> 0 < P l k -> Q k ord0 = q].
Proof.
move=> sP sQ lP lQ p q; rewrite d2_causal //.
have one (x : R) : (1 - x = 1) <-> (x = 0).
  by rewrite sub1_eq subrr.
have col (A : 'M[R]_n.+2) l : row_stochastic A -> lower_triangular A ->
    (tv A ord0 l = delta A) <-> (A l ord0 = 1 - delta A).
  by move=> st lt; rewrite (causal_tv0 st lt) sub1_eq.
split=> [[P0|Q0|[l l0 [tvl cond]]]|[p1|q1|[l l0 [Pl cond]]]].
- by constructor 1; apply/one.
- by constructor 2; apply/one.
- constructor 3; exists l => //; split; first by apply/col.
  by move=> k k0 Pk; apply/col => //; exact: cond.
- by constructor 1; apply/one.
- by constructor 2; apply/one.
constructor 3; exists l => //; split; first by apply/col.
by move=> k k0 Pk; apply/col => //; exact: cond.
Qed.

End CausalProduct.
