"""bench/packs.py's claims, kept true: packs reach high acceptance sooner, and an unrelated correction of
another field does not make the learned rule stop applying (it did when consistency was judged step-wide)."""

from bench.packs import demo_case, run


def test_the_demo_case_keeps_its_rule_per_field_and_lost_it_step_wide():
    assert demo_case() == ([], ["currency"])


def test_packs_reach_high_acceptance_sooner_and_an_unrelated_correction_does_not_undo_the_rule():
    for seed in range(5):
        none = run("none", 200, 0.1, seed)
        per_field = run("per-field", 200, 0.1, seed)
        step_wide = run("step-wide", 200, 0.1, seed)
        assert none["reached"] is None and per_field["reached"] is not None and per_field["reached"] <= 40
        assert per_field["stops"] == 0 < step_wide["stops"]
        assert per_field["acceptance"] > step_wide["acceptance"]
