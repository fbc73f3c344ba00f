# bench/clock: libremat's overhead and driver calls under the h100 and
# legacy clock models side by side (included from libremat.mk).
BENCHES += bench/clock/clock.sh
