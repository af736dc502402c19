"""kernelwatch.units: durations, changes and p-values written for people."""

from __future__ import annotations

from kernelwatch.units import change, format_duration, format_joules, joule_unit, p_text


def test_zero_and_one_second_are_written_as_such():
    assert format_duration(0.0) == "0 s"
    assert format_duration(1.0) == "1.00 s"


def test_a_duration_of_a_thousand_seconds_or_more_has_no_decimals():
    """Past 999 s the seconds are written whole ("1234 s"), never with a negative precision."""
    assert format_duration(1234.0) == "1234 s"


def test_a_change_under_one_percent_still_says_slower_or_faster():
    """The direction word follows the sign of the change, whatever its size; no change reads slower."""
    assert change(1.005) == "0.5% slower"
    assert change(0.995) == "0.5% faster"
    assert change(1.0) == "0.0% slower"


def test_p_values_from_one_down_to_ten_to_the_minus_twelve_are_written_out():
    """Two significant figures from 1 down to 1e-12 inclusive; below, "< 1e-12"."""
    assert p_text(0.5) == "0.5"
    assert p_text(0.0123) == "0.012"
    assert p_text(1e-12) == "1e-12"
    assert p_text(1e-13) == "< 1e-12"


def test_a_negative_duration_keeps_its_sign_and_its_unit():
    """The unit is chosen by the magnitude (format_duration takes abs), so -2.5 ms is not "0 s"."""
    assert format_duration(-2.5e-3) == "-2.50 ms"
    assert format_duration(-1.0) == "-1.00 s"


def test_nine_hundred_ninety_nine_microseconds_stay_in_microseconds():
    """A unit holds values below 1000 of it: 999 µs is not written as 0.999 ms."""
    assert format_duration(999e-6) == "999 µs"


def test_joules_are_written_in_the_units_of_the_docstrings_examples():
    assert format_joules(1.7) == "1.7 J"
    assert format_joules(0.0008697) == "0.8697 mJ"
    assert format_joules(42e-6) == "42 µJ"


def test_each_energy_unit_is_used_from_a_tenth_of_it_upward():
    """J from 0.1 J, mJ from 0.1 mJ, µJ below: the scale is exactly the unit's (energy.interval_text multiplies by it)."""
    assert joule_unit(0.1) == (1.0, "J")
    assert joule_unit(0.0999) == (1e3, "mJ")
    assert joule_unit(1e-4) == (1e3, "mJ")
    assert joule_unit(0.999e-4) == (1e6, "µJ")
    assert joule_unit(1e-9) == (1e6, "µJ")
