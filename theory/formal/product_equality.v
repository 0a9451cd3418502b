(* The equality condition of Theorem D2 (docs/theory.md, section 1): for      *)
(* row-stochastic P (n x m) and Q (m x p) with delta(P) delta(Q) != 0,          *)
(*   delta(PQ) = delta(P) delta(Q)  iff  some pair (i, j) attains delta(P)     *)
(*   and, with S+ = {k : P_ik > P_jk} and S- = {l : P_il < P_jl},              *)
(*   (a) every (k, l) in S+ x S- attains delta(Q), and                         *)
(*   (b) no column t has Q_kt > Q_lt for one pair of S+ x S- and               *)
(*       Q_k't < Q_l't for another.                                            *)
(* Proof: for v = P_i - P_j, s = sum_k v_k^+ and c_kl = v_k^+ v_l^- (positive   *)
(* exactly on S+ x S-), the chain of product.v                                 *)
(*   s ||(PQ)_i - (PQ)_j||_1 = sum_t |sum_kl c_kl (Q_kt - Q_lt)|                *)
(*                          <= sum_kl c_kl ||Q_k - Q_l||_1 <= s^2 2 delta(Q)    *)
(* is an equality iff, column by column, the nonzero terms c_kl (Q_kt - Q_lt)  *)
(* share a sign (b), and every pair with c_kl > 0 has ||Q_k - Q_l||_1 =        *)
(* 2 delta(Q) (a).                                                             *)
(*   d2_condition P Q == delta P * delta Q = 0, or a pair as above             *)
(*   chain_condition As == d2_condition at every step (Ahat_l, R_{l-1}) of the  *)
(*                       rollout R_l = Ahat_l R_{l-1}, R_0 = I                  *)
(* Main results: d2_equality (the iff); zero_sum_mul_eq_sufficient and         *)
(* zero_sum_mul_eq_necessary (the same for any zero-sum vector in place of     *)
(* P_i - P_j); rollout_chain (n >= 2, every delta(Ahat_l) > 0:                  *)
(* delta(R_L) = prod_l delta(Ahat_l) iff chain_condition).                      *)

From mathcomp Require Import all_ssreflect all_algebra.
From AttnBounds Require Import stochastic dobrushin product.

Set Implicit Arguments.
Unset Strict Implicit.
Unset Printing Implicit Defensive.

Import GRing.Theory Num.Theory Order.TTheory.
Local Open Scope ring_scope.

Section Signs.
Variable R : realFieldType.

(* |sum_i x_i| = sum_i |x_i| iff the terms share a sign.                       *)
Lemma norm_sum_eq_sign (I : finType) (x : I -> R) :
  `|\sum_i x i| = \sum_i `|x i| -> (forall i, 0 <= x i) \/ (forall i, x i <= 0).
Proof.
have [s0|s0] := leP 0 (\sum_i x i) => e.
  left => i; have := ler_sum_eq (fun i => ler_norm (x i)) _ i.
  by rewrite -e ger0_norm // => /(_ erefl) ->.
right => i; have FG k : - x k <= `|x k| by rewrite -normrN ler_norm.
have := ler_sum_eq FG _ i; rewrite sumrN -e ltr0_norm // => /(_ erefl) xi.
by rewrite -oppr_ge0 xi.
Qed.

Lemma norm_sum_same_sign (I : finType) (x : I -> R) :
  (forall i, 0 <= x i) \/ (forall i, x i <= 0) -> `|\sum_i x i| = \sum_i `|x i|.
Proof.
case=> h.
  by rewrite ger0_norm ?sumr_ge0 //; apply: eq_bigr => i _; rewrite ger0_norm.
rewrite ler0_norm -?sumrN; last by rewrite -oppr_ge0 -sumrN sumr_ge0 // => i _; rewrite oppr_ge0.
by apply: eq_bigr => i _; rewrite ler0_norm.
Qed.

Lemma pos_gt0 (x : R) : (0 < pos x) = (0 < x).
Proof. by rewrite /pos lt_maxr ltxx orbF. Qed.

Lemma neg_gt0 (x : R) : (0 < neg x) = (x < 0).
Proof. by rewrite /neg lt_maxr ltxx orbF oppr_gt0. Qed.

Lemma pos_eq0 (x : R) : ~~ (0 < x) -> pos x = 0.
Proof. by rewrite -leNgt => x0; rewrite /pos max_r. Qed.

Lemma neg_eq0 (x : R) : ~~ (x < 0) -> neg x = 0.
Proof. by rewrite -leNgt => x0; rewrite /neg max_r ?oppr_le0. Qed.

End Signs.

Section ZeroSum.
Variables (R : realFieldType) (m p : nat) (v : 'I_m -> R) (Q : 'M[R]_(m, p)).
Hypothesis v0 : \sum_k v k = 0.

Local Notation s := (\sum_k pos (v k)).
Local Notation C x := (pos (v x.1) * neg (v x.2)).
Local Notation D x t := (Q x.1 t - Q x.2 t).
Local Notation T t := (\sum_k v k * Q k t).

Lemma C_ge0 x : 0 <= C x.
Proof. by rewrite mulr_ge0 ?pos_ge0 ?neg_ge0. Qed.

(* c_kl > 0 iff k in S+ and l in S-                                             *)
Lemma C_gt0 x : (0 < C x) = (0 < v x.1) && (v x.2 < 0).
Proof.
case: (ltrP 0 (v x.1)) => [k|k]; last by rewrite pos_eq0 -?leNgt // mul0r ltxx.
have Pk : 0 < pos (v x.1) by rewrite pos_gt0.
by rewrite (pmulr_rgt0 _ Pk) neg_gt0.
Qed.

Lemma C_eq0 x : ~~ (0 < C x) -> C x = 0.
Proof. by move=> h; apply/eqP; rewrite eq_le C_ge0 andbT leNgt. Qed.

Lemma coupling_pairs t : s * T t = \sum_x C x * D x t.
Proof. by rewrite coupling // pair_bigA. Qed.

Lemma sum_C : (\sum_x C x) = s * s.
Proof.
rewrite -(pair_bigA _ (fun k l => pos (v k) * neg (v l))) /= mulr_suml.
by apply: eq_bigr => k _; rewrite -mulr_sumr -(sum_pos_neg v0).
Qed.

(* The four steps of the chain.                                               *)
Lemma chain_A : s * (\sum_t `|T t|) = \sum_t `|\sum_x C x * D x t|.
Proof.
have s_ge0 : 0 <= s by apply: sumr_ge0 => k _; exact: pos_ge0.
rewrite mulr_sumr; apply: eq_bigr => t _.
by rewrite -coupling_pairs normrM (ger0_norm s_ge0).
Qed.

Lemma chain_A_le t : `|\sum_x C x * D x t| <= \sum_x C x * `|D x t|.
Proof.
apply: le_trans (ler_norm_sum _ _ _) _; apply: ler_sum => x _.
by rewrite normrM ger0_norm ?C_ge0.
Qed.

Lemma chain_swap : \sum_t \sum_x C x * `|D x t| = \sum_x C x * (tv Q x.1 x.2 *+ 2).
Proof.
rewrite exchange_big /=; apply: eq_bigr => x _.
by rewrite /tv halfK mulr_sumr.
Qed.

Lemma chain_B_le x : C x * (tv Q x.1 x.2 *+ 2) <= C x * (delta Q *+ 2).
Proof. by rewrite ler_wpmul2l ?C_ge0 // ler_wmuln2r ?tv_le_delta. Qed.

Lemma chain_end : \sum_x C x * (delta Q *+ 2) = s * (s * (delta Q *+ 2)).
Proof. by rewrite -mulr_suml sum_C mulrA. Qed.

Definition sign_condition := forall t k l k' l',
  0 < v k -> v l < 0 -> 0 < v k' -> v l' < 0 -> ~ (Q l t < Q k t /\ Q k' t < Q l' t).

Definition attain_condition := forall k l, 0 < v k -> v l < 0 -> tv Q k l = delta Q.

(* Under (b) the terms of column t share a sign.                              *)
Lemma same_sign t : sign_condition ->
  (forall x, 0 <= C x * D x t) \/ (forall x, C x * D x t <= 0).
Proof.
move=> sc.
have [x /= /andP[/andP[vk vl] lt]|none] :=
  pickP (fun x : 'I_m * 'I_m => (0 < v x.1) && (v x.2 < 0) && (Q x.1 t < Q x.2 t)).
  right => y; have [Cy|] := boolP (0 < C y); last by move/C_eq0 ->; rewrite mul0r.
  rewrite pmulr_rle0 // subr_le0 leNgt; apply/negP => ylt.
  by move: Cy; rewrite C_gt0 => /andP[vy1 vy2]; exact: (sc t y.1 y.2 x.1 x.2).
left => y; have [Cy|] := boolP (0 < C y); last by move/C_eq0 ->; rewrite mul0r.
rewrite pmulr_rge0 // subr_ge0 leNgt; apply/negP => ylt.
move: Cy; rewrite C_gt0 => /andP[vy1 vy2].
by move: (none y); rewrite /= vy1 vy2 ylt.
Qed.

Lemma zero_sum_mul_eq_sufficient : attain_condition -> sign_condition ->
  s * (\sum_t `|T t|) = s * (s * (delta Q *+ 2)).
Proof.
move=> ac sc; rewrite chain_A -chain_end.
under eq_bigr => t _ do rewrite (norm_sum_same_sign (same_sign t sc)).
have -> : \sum_t \sum_x `|C x * D x t| = \sum_t \sum_x C x * `|D x t|.
  by apply: eq_bigr => t _; apply: eq_bigr => x _; rewrite normrM (ger0_norm (C_ge0 _)).
rewrite chain_swap; apply: eq_bigr => x _.
have [Cx|] := boolP (0 < C x); last by move/C_eq0 ->; rewrite !mul0r.
by move: Cx; rewrite C_gt0 => /andP[k l]; rewrite ac.
Qed.

Lemma zero_sum_mul_eq_necessary : 0 < s ->
  s * (\sum_t `|T t|) = s * (s * (delta Q *+ 2)) -> attain_condition /\ sign_condition.
Proof.
move=> s0 e.
have X12 : \sum_t `|\sum_x C x * D x t| <= \sum_t \sum_x C x * `|D x t|.
  by apply: ler_sum => t _; exact: chain_A_le.
have X24 : \sum_x C x * (tv Q x.1 x.2 *+ 2) <= \sum_x C x * (delta Q *+ 2).
  by apply: ler_sum => x _; exact: chain_B_le.
rewrite chain_A -chain_end in e.
have E24 : \sum_x C x * (tv Q x.1 x.2 *+ 2) = \sum_x C x * (delta Q *+ 2).
  by apply/eqP; rewrite eq_le X24 -e -chain_swap X12.
have E12 : \sum_t `|\sum_x C x * D x t| = \sum_t \sum_x C x * `|D x t|.
  by apply/eqP; rewrite eq_le X12 /= chain_swap E24 -e lexx.
split=> [k l vk vl|t k l k' l' vk vl vk' vl' [lt1 lt2]].
  (* (a): equality in step B, termwise *)
  have Cx : 0 < C (k, l) by rewrite C_gt0 vk vl.
  have := ler_sum_eq chain_B_le E24 (k, l) => /=.
  move/(mulfI (lt0r_neq0 Cx)) => /(congr1 (fun z => 2%:R^-1 * z)).
  by rewrite !halfMn2.
(* (b): equality in step A, column t: its terms share a sign, yet (k, l) gives *)
(* a positive one and (k', l') a negative one                                  *)
have := ler_sum_eq chain_A_le E12 t.
have -> : \sum_x C x * `|D x t| = \sum_x `|C x * D x t|.
  by apply: eq_bigr => x _; rewrite normrM (ger0_norm (C_ge0 _)).
move/norm_sum_eq_sign => [pos_t|neg_t].
  have Cx : 0 < C (k', l') by rewrite C_gt0 vk' vl'.
  by have := pos_t (k', l'); rewrite pmulr_rge0 //= subr_ge0 leNgt lt2.
have Cx : 0 < C (k, l) by rewrite C_gt0 vk vl.
by have := neg_t (k, l); rewrite pmulr_rle0 //= subr_le0 leNgt lt1.
Qed.


End ZeroSum.

Section D2Equality.
Variable R : realFieldType.

Definition d2_condition n m p (P : 'M[R]_(n, m)) (Q : 'M[R]_(m, p)) :=
  delta P * delta Q = 0 \/ exists i j, [/\ tv P i j = delta P,
    (forall k l, P j k < P i k -> P i l < P j l -> tv Q k l = delta Q) &
    (forall t k l k' l', P j k < P i k -> P i l < P j l ->
       P j k' < P i k' -> P i l' < P j l' -> ~ (Q l t < Q k t /\ Q k' t < Q l' t))].

Section Pair.
Variables (n m p : nat) (P : 'M[R]_(n, m)) (Q : 'M[R]_(m, p)) (i j : 'I_n).
Hypothesis e : \sum_k P i k = \sum_k P j k.

Local Notation v := (fun k => P i k - P j k).

Lemma v0 : \sum_k v k = 0.
Proof. by rewrite sumrB e subrr. Qed.

Lemma tv_mulE : tv (P *m Q) i j = 2%:R^-1 * \sum_t `|\sum_k v k * Q k t|.
Proof.
rewrite /tv; congr (_ * _); apply: eq_bigr => t _; rewrite !mxE -sumrB; congr `|_|.
by apply: eq_bigr => k _; rewrite mulrBl.
Qed.

Lemma tv_posE : tv P i j = \sum_k pos (v k).
Proof. by rewrite /tv (sum_norm_pos v0) halfMn2. Qed.

(* tv(PQ)_ij = tv(P)_ij delta(Q) is the equality case of the zero-sum chain.  *)
Lemma tv_mul_eqE : 0 < tv P i j ->
  (tv (P *m Q) i j = tv P i j * delta Q) <->
  (\sum_k pos (v k)) * (\sum_t `|\sum_k v k * Q k t|) =
  (\sum_k pos (v k)) * ((\sum_k pos (v k)) * (delta Q *+ 2)).
Proof.
rewrite tv_mulE tv_posE => s0; split=> [h|h].
  by rewrite mulrnAr -h halfK.
move/(mulfI (lt0r_neq0 s0)): h => ->.
by rewrite mulrnAr halfMn2.
Qed.

End Pair.

Theorem d2_equality n m p (P : 'M[R]_(n, m)) (Q : 'M[R]_(m, p)) :
  row_stochastic P -> row_stochastic Q ->
  delta (P *m Q) = delta P * delta Q <-> d2_condition P Q.
Proof.
move=> sP sQ; have D2 := d2_bound sP sQ; have [_ rP] := sP.
have e i j : \sum_k P i k = \sum_k P j k by rewrite !rP.
have trivial : delta P * delta Q = 0 -> delta (P *m Q) = delta P * delta Q.
  by move=> z; apply/eqP; rewrite eq_le D2 z delta_ge0.
split=> [E|[z|[i [j [tvij ac sc]]]]]; last 2 first.
- exact: trivial.
- have [s0|s_gt0] := leP (tv P i j) 0.
    have tv0 : tv P i j = 0 by apply/eqP; rewrite eq_le s0 tv_ge0.
    by apply: trivial; rewrite -tvij tv0 mul0r.
  apply/eqP; rewrite eq_le D2 -tvij -(proj2 (tv_mul_eqE Q (e i j) s_gt0)).
    exact: tv_le_delta.
  apply: (zero_sum_mul_eq_sufficient (v0 (e i j))) => /= [k l|t k l k' l'].
    by rewrite !(subr_gt0, subr_lt0); exact: ac.
  by rewrite !(subr_gt0, subr_lt0); exact: sc.
have [z|nz] := eqVneq (delta P * delta Q) 0; first by left.
right.
have PQ_gt0 : 0 < delta (P *m Q) by rewrite E lt_def nz mulr_ge0 ?delta_ge0.
case: (delta_attained (P *m Q)) => [D0|[i [j Eij]]]; first by move: PQ_gt0; rewrite D0 ltxx.
have dQ : 0 < delta Q.
  by rewrite lt_def delta_ge0 andbT; apply: contraNneq nz => ->; rewrite mulr0.
have le1 := tv_mul_le Q (e i j); rewrite Eij E in le1.
have tvij : tv P i j = delta P.
  by apply/eqP; rewrite eq_le tv_le_delta /=; move: le1; rewrite ler_pmul2r.
have s_gt0 : 0 < tv P i j.
  by rewrite tvij lt_def delta_ge0 andbT; apply: contraNneq nz => ->; rewrite mul0r.
have s_pos : 0 < \sum_k pos (P i k - P j k) by rewrite -(tv_posE (e i j)).
have eqn := proj1 (tv_mul_eqE Q (e i j) s_gt0) (etrans Eij (etrans E (congr1 (fun x => x * delta Q) (esym tvij)))).
have [ac sc] := zero_sum_mul_eq_necessary (v0 (e i j)) s_pos eqn.
exists i, j; split => // [k l Pk Pl|t k l k' l' Pk Pl Pk' Pl'].
  by apply: ac => /=; rewrite ?subr_gt0 ?subr_lt0.
by apply: sc => /=; rewrite ?subr_gt0 ?subr_lt0.
Qed.

End D2Equality.
(* The chain (docs/theory.md, section 1): for n >= 2 and factors with         *)
(* delta(Ahat_l) > 0, delta(R_L) = prod_l delta(Ahat_l) iff D2's equality       *)
(* condition holds at every step l for the pair (Ahat_l, R_{l-1}), where        *)
(* R_l = Ahat_l R_{l-1} and R_0 = I (rollout in product.v).                     *)
Section Chain.
Variables (R : realFieldType) (n : nat).
Implicit Types As : seq 'M[R]_n.+2.

Lemma delta_unit : delta (1%:M : 'M[R]_n.+2) = 1.
Proof.
apply/eqP; rewrite eq_le delta_unit_le1 /=.
apply: le_trans (tv_le_delta _ ord0 (lift ord0 ord0)).
rewrite /tv; under eq_bigr do rewrite !mxE.
by rewrite sum_unit_diff // mulVf ?two_neq0.
Qed.

Lemma rollout_le_prod As : (forall A, A \in As -> row_stochastic A) ->
  delta (rollout As) <= \prod_(A <- As) delta (rollout_factor A).
Proof.
elim: As => [|A As IH] st /=; first by rewrite big_nil delta_unit.
have stA : row_stochastic A by apply: st; rewrite inE eqxx.
have stAs : forall B, B \in As -> row_stochastic B.
  by move=> B BAs; apply: st; rewrite inE BAs orbT.
rewrite big_cons.
apply: le_trans (d2_bound (factor_stochastic stA) (rollout_stochastic stAs)) _.
by rewrite ler_wpmul2l ?delta_ge0 ?IH.
Qed.

(* every step of the chain is an equality of D2                                *)
Fixpoint chain_equal As : Prop :=
  if As is A :: As' then
    delta (rollout_factor A *m rollout As') = delta (rollout_factor A) * delta (rollout As')
    /\ chain_equal As'
  else True.

(* every step satisfies D2's equality condition                                *)
Fixpoint chain_condition As : Prop :=
  if As is A :: As' then d2_condition (rollout_factor A) (rollout As') /\ chain_condition As'
  else True.

Lemma chain_equal_condition As : (forall A, A \in As -> row_stochastic A) ->
  chain_equal As <-> chain_condition As.
Proof.
elim: As => [|A As IH] st //=.
have stA : row_stochastic A by apply: st; rewrite inE eqxx.
have stAs : forall B, B \in As -> row_stochastic B.
  by move=> B BAs; apply: st; rewrite inE BAs orbT.
have D2 := d2_equality (factor_stochastic stA) (rollout_stochastic stAs).
by split=> -[h1 h2]; split; [exact/D2 | exact/IH | exact/D2 | exact/IH].
Qed.

Theorem rollout_chain As : (forall A, A \in As -> row_stochastic A) ->
  (forall A, A \in As -> 0 < delta (rollout_factor A)) ->
  delta (rollout As) = \prod_(A <- As) delta (rollout_factor A) <-> chain_condition As.
Proof.
move=> st pos; rewrite -chain_equal_condition //.
elim: As st pos => [|A As IH] st pos /=; first by rewrite big_nil delta_unit.
have stA : row_stochastic A by apply: st; rewrite inE eqxx.
have stAs : forall B, B \in As -> row_stochastic B.
  by move=> B BAs; apply: st; rewrite inE BAs orbT.
have posA : 0 < delta (rollout_factor A) by apply: pos; rewrite inE eqxx.
have posAs : forall B, B \in As -> 0 < delta (rollout_factor B).
  by move=> B BAs; apply: pos; rewrite inE BAs orbT.
have {}IH := IH stAs posAs.
rewrite big_cons; split=> [E|[step rest]]; last by rewrite step (proj2 IH rest).
(* delta(Ahat) Pi' = delta(Ahat R') <= delta(Ahat) delta(R') <= delta(Ahat) Pi' *)
have D2 := d2_bound (factor_stochastic stA) (rollout_stochastic stAs).
have eR : delta (rollout As) = \prod_(B <- As) delta (rollout_factor B).
  apply/eqP; rewrite eq_le rollout_le_prod //=.
  by rewrite -(ler_pmul2l posA) -E D2.
by split; [rewrite E eR | exact: (proj1 IH eR)].
Qed.

End Chain.
