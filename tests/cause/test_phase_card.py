"""The card of a host routine slower in a phase (src/kernelwatch/cause/phases.py): phases ranked by the time each
gained, a phase found slower first, shares of the gain, and every phase's median on both sides."""

from __future__ import annotations

from kernelwatch.cause.phases import FOLLOWED_SCORE, phase_card, phase_causes


def fields(phase, label, median_s, reference_s, detectable=0.015):
    ratio = median_s / reference_s if reference_s else None
    return {"phase": phase, "label": label, "median_s": median_s, "reference_median_s": reference_s,
            "ratio": ratio, "detectable": detectable if reference_s else None, "reason": "", "fails": label == "slower",
            "reference_runs": 3 if reference_s else None, "references": []}


ROUTINE = [fields("HtoD", "same", 151.0e-6, 150.0e-6), fields("kernel", "slower", 110e-6, 100e-6),
           fields("DtoH", "same", 73.0e-6, 74.0e-6), fields("host", "new", 300e-6, None)]


def test_the_slower_phase_is_the_first_cause_with_its_share_of_the_time_the_phases_gained():
    causes = phase_causes(ROUTINE)
    assert [c.key for c in causes] == ["HtoD phase", "kernel phase"]  # DtoH gained nothing, host has no reference
    by_key = {c.key: c for c in causes}
    gained = 10e-6 + 1e-6
    assert abs(by_key["kernel phase"].score - (FOLLOWED_SCORE + 100 * 10e-6 / gained)) < 1e-9
    assert abs(by_key["HtoD phase"].score - 100 * 1e-6 / gained) < 1e-9
    assert by_key["kernel phase"].words == ("100 µs -> 110 µs (x1.100, slower; detectable 1.5%), "
                                            "91% of the time the phases gained")


def test_a_phase_within_its_noise_that_gained_under_five_percent_of_the_time_is_not_named():
    routine = [fields("HtoD", "same", 150.4e-6, 150e-6), fields("kernel", "slower", 110e-6, 100e-6)]  # 3.8%
    assert [c.key for c in phase_causes(routine)] == ["kernel phase"]
    routine[0] = fields("HtoD", "same", 150.53e-6, 150e-6)  # 5.0%: named
    assert [c.key for c in phase_causes(routine)] == ["HtoD phase", "kernel phase"]


def test_a_phase_within_its_noise_never_outranks_one_judged_slower_even_when_it_gained_more():
    routine = [fields("HtoD", "same", 200e-6, 150e-6), fields("kernel", "slower", 101.6e-6, 100e-6),
               fields("DtoH", "accepted", 75e-6, 74e-6)]  # DtoH's share 1.9%: named, as a flagged phase
    assert [c.key for c in sorted(phase_causes(routine), key=lambda c: -c.score)] == [
        "kernel phase", "DtoH phase", "HtoD phase"]  # the followed two by their share (1.6 µs, 1 µs), then the unflagged one


def test_the_card_lists_the_ranked_phases_both_sides_medians_and_the_environment_differences():
    lines = phase_card("suite.py::routine", ROUTINE, {"driver": ("580.1", "580.2"), "CuPy": ("14", "14")},
                       "history run 1, history run 2")
    text = "\n".join(lines)
    assert lines[0] == "#### Why `suite.py::routine` is slower"
    assert lines[2].startswith("Phase by phase against history run 1, history run 2;")
    assert "1. **kernel phase**: 100 µs -> 110 µs" in text and "2. **HtoD phase**: " in text
    assert "| kernel median (µs) | 100 | **110** |" in text
    assert "| host median (µs) | — | **300** |" in text  # no reference: the base side is missing
    assert "| DtoH median (µs) | 74 | **73** |" in text
    same = phase_card("r", [fields("HtoD", "slower", 150.0004e-6, 150.0001e-6)], None, "run 1")
    assert "| HtoD median (µs) | 150 | 150 |" in same  # equal to the 4 figures printed: not marked
    assert text.rstrip().endswith("Environment differences: driver 580.1 -> 580.2")


def test_a_routine_whose_phases_gained_nothing_says_no_difference_explains_it():
    routine = [fields("kernel", "slower", 99e-6, 100e-6)]  # a ratio test can flag what the medians do not show
    assert phase_causes(routine) == []
    assert "No difference the card reads explains it" in "\n".join(phase_card("r", routine, None, "run 1"))


def test_a_phase_judged_slower_ranks_first_even_with_a_sliver_of_the_time_gained():
    routine = [fields("HtoD", "same", 199.8e-6, 100e-6), fields("kernel", "slower", 100.2e-6, 100e-6)]  # 0.2%
    lines = phase_card("r", routine, None, "run 1")
    assert [line.split("**")[1] for line in lines if line[:3] in ("1. ", "2. ")] == ["kernel phase", "HtoD phase"]


def test_a_phase_whose_median_equals_its_reference_gained_nothing_and_is_no_cause():
    assert phase_causes([fields("kernel", "slower", 100e-6, 100e-6)]) == []
    routine = [fields("kernel", "slower", 100e-6, 100e-6), fields("HtoD", "same", 160e-6, 150e-6)]
    assert [c.key for c in phase_causes(routine)] == ["HtoD phase"]


def test_the_phases_after_one_without_a_reference_are_still_causes():
    routine = [fields("host", "new", 300e-6, None), fields("DtoH", "same", 73e-6, 74e-6),
               fields("kernel", "slower", 110e-6, 100e-6)]
    assert [c.key for c in phase_causes(routine)] == ["kernel phase"]


def test_a_phase_within_its_noise_that_gained_exactly_five_percent_of_the_time_is_named():
    routine = [fields("HtoD", "same", 2.0, 1.0), fields("kernel", "slower", 20.0, 1.0)]  # 1 s of 20 s gained
    assert [c.key for c in phase_causes(routine)] == ["HtoD phase", "kernel phase"]


def test_the_detectable_change_is_given_in_percent_to_a_tenth():
    (cause,) = phase_causes([fields("kernel", "slower", 110e-6, 100e-6, detectable=0.1)])
    assert "(x1.100, slower; detectable 10.0%)" in cause.words


def test_medians_either_side_of_a_rounding_edge_are_shown_in_microseconds_to_4_figures_and_marked():
    lines = phase_card("r", [fields("kernel", "slower", 1.00050001e-3, 1.00049999e-3)], None, "run 1")
    assert "| kernel median (µs) | 1000 | **1001** |" in lines
