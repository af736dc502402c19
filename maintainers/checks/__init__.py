"""GPU method checks and timings of the suite: does the timer agree with Nsight Compute, does the cause card
blame what broke, does the energy meter hold, did two timings overlap under xdist; what the nightly, the
history store and change-point detection cost; which warptile configuration the registry takes."""
