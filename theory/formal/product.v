(* Theorem D2 (docs/theory.md, section 1): for row-stochastic P (n x m) and Q  *)
(* (m x p),  delta(P Q) <= delta(P) delta(Q).                                  *)
(* Proof: rows i, j of P Q differ by sum_k v_k Q_k with v = P_i - P_j, a       *)
(* zero-sum vector. Split v = v^+ - v^- with s = sum v^+ = sum v^- =           *)
(* (1/2)||v||_1 (the sign split, stochastic.v). The coupling identity          *)
(*     s * sum_k v_k Q_k = sum_k sum_l v_k^+ v_l^- (Q_k - Q_l)                  *)
(* and ||Q_k - Q_l||_1 <= 2 delta(Q) give s ||(PQ)_i - (PQ)_j||_1 <=            *)
(* s^2 2 delta(Q); divide by s > 0 (s = 0 means v = 0). The rollout bound      *)
(* follows by induction over the layers:                                       *)
(*     delta(Ahat_L ... Ahat_1) <= prod_l delta(Ahat_l) <= prod_l (1 + delta(A_l))/2. *)
(*                                                                             *)
(*   rollout As == Ahat_L *m ... *m Ahat_1 for the list As = [:: A_L; ...; A_1] *)
(*                 of square matrices, Ahat = rollout_factor A (1%:M if empty) *)
(* Main results: d2_bound, tv_mul_le, rollout_bound.                           *)
(* The bound needs only equal row sums of P (d2_bound_any): Q is arbitrary.    *)

From mathcomp Require Import all_ssreflect all_algebra.
From AttnBounds Require Import stochastic dobrushin.

Set Implicit Arguments.
Unset Strict Implicit.
Unset Printing Implicit Defensive.

Import GRing.Theory Num.Theory Order.TTheory.
Local Open Scope ring_scope.

Section Product.
Variable R : realFieldType.

(* The coupling identity for a zero-sum v with s = sum_k v_k^+.               *)
Lemma coupling m p (v : 'I_m -> R) (Q : 'M[R]_(m, p)) (t : 'I_p) :
  \sum_k v k = 0 ->
  (\sum_k pos (v k)) * (\sum_k v k * Q k t) =
  \sum_k \sum_l pos (v k) * neg (v l) * (Q k t - Q l t).
Proof.
move=> v0; have sneg := sum_pos_neg v0.
have -> : \sum_k v k * Q k t = \sum_k pos (v k) * Q k t - \sum_k neg (v k) * Q k t.
  by rewrite -sumrB; apply: eq_bigr => k _; rewrite -mulrBl pos_subr_neg.
transitivity (\sum_k \sum_l pos (v k) * neg (v l) * Q k t -
              \sum_k \sum_l pos (v k) * neg (v l) * Q l t); last first.
  rewrite -sumrB; apply: eq_bigr => k _; rewrite -sumrB; apply: eq_bigr => l _.
  by rewrite mulrBr.
rewrite mulrBr; congr (_ - _).
  rewrite mulrC mulr_suml; apply: eq_bigr => k _.
  by rewrite sneg mulr_sumr; apply: eq_bigr => l _; rewrite mulrAC.
rewrite exchange_big /= mulr_sumr; apply: eq_bigr => l _.
by rewrite mulr_suml; apply: eq_bigr => k _; rewrite mulrA.
Qed.

(* (1/2) ||sum_k v_k Q_k||_1 <= (1/2) ||v||_1 delta(Q) for a zero-sum v.       *)
Lemma zero_sum_mul_le m p (v : 'I_m -> R) (Q : 'M[R]_(m, p)) : \sum_k v k = 0 ->
  2%:R^-1 * (\sum_t `|\sum_k v k * Q k t|) <= (2%:R^-1 * \sum_k `|v k|) * delta Q.
Proof.
move=> v0; rewrite (sum_norm_pos v0) halfMn2.
have [s sP] : {s | \sum_k pos (v k) = s} by exists (\sum_k pos (v k)).
have sneg : \sum_k neg (v k) = s by rewrite -sum_pos_neg.
have s_ge0 : 0 <= s by rewrite -sP; apply: sumr_ge0 => k _; exact: pos_ge0.
rewrite sP; have [s0|s_neq0] := eqVneq s 0.
  (* s = 0: v^+ = v^- = 0, so v = 0 and both sides vanish *)
  have P0 := psumr_eq0P (fun k _ => pos_ge0 (v k)) (etrans sP s0).
  have N0 := psumr_eq0P (fun k _ => neg_ge0 (v k)) (etrans sneg s0).
  have -> : \sum_t `|\sum_k v k * Q k t| = 0.
    apply: big1 => t _; rewrite big1 ?normr0 // => k _.
    by rewrite -(pos_subr_neg (v k)) P0 // N0 // subrr mul0r.
  by rewrite mulr0 s0 mul0r.
have s_gt0 : 0 < s by rewrite lt_def s_neq0.
(* s ||(PQ)_i - (PQ)_j||_1 <= sum_k sum_l v_k^+ v_l^- ||Q_k - Q_l||_1 <= s^2 2 delta(Q) *)
have key : s * (\sum_t `|\sum_k v k * Q k t|) <= s * (s * (delta Q *+ 2)).
  rewrite mulr_sumr.
  apply: le_trans (_ : \sum_t \sum_k \sum_l
                         pos (v k) * neg (v l) * `|Q k t - Q l t| <= _).
    apply: ler_sum => t _; rewrite -(ger0_norm s_ge0) -normrM -sP coupling //.
    apply: le_trans (ler_norm_sum _ _ _) _; apply: ler_sum => k _.
    apply: le_trans (ler_norm_sum _ _ _) _; apply: ler_sum => l _.
    by rewrite normrM ger0_norm // mulr_ge0 ?pos_ge0 ?neg_ge0.
  apply: le_trans (_ : \sum_k \sum_l pos (v k) * neg (v l) * (delta Q *+ 2) <= _).
    rewrite exchange_big /=; apply: ler_sum => k _.
    rewrite exchange_big /=; apply: ler_sum => l _.
    rewrite -mulr_sumr; apply: ler_wpmul2l; first by rewrite mulr_ge0 ?pos_ge0 ?neg_ge0.
    have -> : \sum_t `|Q k t - Q l t| = tv Q k l *+ 2 by rewrite /tv halfK.
    by apply: ler_wmuln2r; exact: tv_le_delta.
  rewrite le_eqVlt; apply/orP; left; apply/eqP.
  rewrite -{1}sP mulr_suml; apply: eq_bigr => k _.
  by rewrite -sneg mulr_suml mulr_sumr; apply: eq_bigr => l _; rewrite mulrA.
move: key; rewrite ler_pmul2l // => key.
by rewrite -[s * delta Q]halfMn2 ler_pmul2l ?half_gt0 // -mulrnAr.
Qed.

(* Rows i, j of P Q: tv(PQ)_ij <= tv(P)_ij delta(Q) when rows i, j of P have  *)
(* the same sum.                                                               *)
Lemma tv_mul_le n m p (P : 'M[R]_(n, m)) (Q : 'M[R]_(m, p)) i j :
  \sum_k P i k = \sum_k P j k -> tv (P *m Q) i j <= tv P i j * delta Q.
Proof.
move=> e; rewrite /tv.
have -> : \sum_t `|(P *m Q) i t - (P *m Q) j t| =
          \sum_t `|\sum_k (P i k - P j k) * Q k t|.
  apply: eq_bigr => t _; rewrite !mxE -sumrB; congr `|_|.
  by apply: eq_bigr => k _; rewrite mulrBl.
have v0 : \sum_k (P i k - P j k) = 0 by rewrite sumrB e subrr.
by have /= := zero_sum_mul_le Q v0.
Qed.

Theorem d2_bound_any n m p (P : 'M[R]_(n, m)) (Q : 'M[R]_(m, p)) :
  (forall i j, \sum_k P i k = \sum_k P j k) -> delta (P *m Q) <= delta P * delta Q.
Proof.
move=> e; apply: delta_le => [|i j]; first by rewrite mulr_ge0 ?delta_ge0.
apply: le_trans (tv_mul_le Q (e i j)) _.
by rewrite ler_wpmul2r ?delta_ge0 ?tv_le_delta.
Qed.

(* D2 as the suite states it (theory/dobrushin.py: dobrushin.product).        *)
Theorem d2_bound n m p (P : 'M[R]_(n, m)) (Q : 'M[R]_(m, p)) :
  row_stochastic P -> row_stochastic Q -> delta (P *m Q) <= delta P * delta Q.
Proof. by case=> _ rs _; apply: d2_bound_any => i j; rewrite !rs. Qed.

(* The rollout bound: multiply the factors, apply D2 and D1 at every layer.   *)
Fixpoint rollout n (As : seq 'M[R]_n) : 'M[R]_n :=
  if As is A :: As' then rollout_factor A *m rollout As' else 1%:M.

Lemma factor_stochastic n (A : 'M[R]_n) : row_stochastic A -> row_stochastic (rollout_factor A).
Proof.
case=> nn rs; split=> [i k|i].
  by rewrite factorE mulr_ge0 ?half_ge0 // addr_ge0 ?ler0n ?nn.
under eq_bigr do rewrite factorE.
by rewrite -mulr_sumr big_split /= sum_unit rs -[1 + 1]mulr2n halfMn2.
Qed.

Lemma delta_unit_le1 n : delta (1%:M : 'M[R]_n) <= 1.
Proof.
apply: delta_le => [|i j]; first exact: ler01.
rewrite /tv; under eq_bigr do rewrite !mxE.
apply: (@le_trans _ _ (2%:R^-1 * 2%:R)); last by rewrite mulVf ?two_neq0.
by rewrite ler_pmul2l ?half_gt0 // sum_unit_diff_le.
Qed.

Lemma unit_stochastic n : row_stochastic (1%:M : 'M[R]_n).
Proof.
split=> [i k|i]; first by rewrite mxE ler0n.
by under eq_bigr do rewrite mxE; exact: sum_unit.
Qed.

Lemma mul_stochastic n m p (P : 'M[R]_(n, m)) (Q : 'M[R]_(m, p)) :
  row_stochastic P -> row_stochastic Q -> row_stochastic (P *m Q).
Proof.
case=> nP rP [nQ rQ]; split=> [i t|i].
  by rewrite mxE; apply: sumr_ge0 => k _; rewrite mulr_ge0.
under eq_bigr do rewrite mxE.
rewrite exchange_big /= -(rP i); apply: eq_bigr => k _.
by rewrite -mulr_sumr rQ mulr1.
Qed.

Lemma rollout_stochastic n (As : seq 'M[R]_n) :
  (forall A, A \in As -> row_stochastic A) -> row_stochastic (rollout As).
Proof.
elim: As => [|A As IH] st /=; first exact: unit_stochastic.
apply: mul_stochastic; first by apply/factor_stochastic/st; rewrite inE eqxx.
by apply: IH => B BAs; apply: st; rewrite inE BAs orbT.
Qed.

Theorem rollout_bound n (As : seq 'M[R]_n) :
  (forall A, A \in As -> row_stochastic A) ->
  delta (rollout As) <= \prod_(A <- As) ((1 + delta A) / 2%:R).
Proof.
elim: As => [|A As IH] st /=; first by rewrite big_nil delta_unit_le1.
have stA : row_stochastic A by apply: st; rewrite inE eqxx.
have stAs : forall B, B \in As -> row_stochastic B.
  by move=> B BAs; apply: st; rewrite inE BAs orbT.
rewrite big_cons.
apply: le_trans (d2_bound (factor_stochastic stA) (rollout_stochastic stAs)) _.
by apply: ler_pmul; rewrite ?delta_ge0 ?(d1_bound stA) ?IH.
Qed.

End Product.
