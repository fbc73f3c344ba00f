# bench/profile: the profiled iteration's cost in simulated time (included
# from libremat.mk).
BENCHES += bench/profile/profile.sh
