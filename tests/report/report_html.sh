#!/bin/sh
# --html writes a well-formed, self-contained page with both charts and the
# tables; one lifetime bar per buffer (27 in mlp3).
. tests/report/lib.sh
"$REPORT" --html "$TMP/page.html" "$FIX" >"$TMP/out" || fail "remat-report --html exited $?"
expect_line "$TMP/out" "page written to $TMP/page.html"
python3 tests/report/check_html.py "$TMP/page.html" 27
# the tables carry the same figures as the terminal report
expect_line "$TMP/page.html" '<td class="mono">sgemm_nn</td><td class="n">3</td><td class="n">386\.0 us</td><td class="n">24\.4%</td>'
expect_line "$TMP/page.html" 'Baseline peak <b>154\.0 MiB</b>, first reached at op 12'
expect_line "$TMP/page.html" '<td>#19</td><td class="n">16\.0 MiB</td><td class="n">10</td><td class="n">67\.0 us</td><td>5.+14</td><td class="mono">3 bias_relu_fwd</td>'
# a file name needing escapes stays well-formed
mkdir -p "$TMP/a&b<c>"
cp "$FIX"/* "$TMP/a&b<c>/"
"$REPORT" --html "$TMP/amp.html" "$TMP/a&b<c>" >/dev/null || fail "escaped dir: exit $?"
python3 tests/report/check_html.py "$TMP/amp.html" 27
# an unwritable page is one message, exit 2
set +e
"$REPORT" --html "$TMP/no/such/dir/page.html" "$FIX" >"$TMP/out" 2>"$TMP/err"
rc=$?
set -e
[ "$rc" -eq 2 ] || fail "unwritable page: exit $rc"
[ ! -s "$TMP/out" ] || fail "unwritable page: a report was printed anyway"
expect_line "$TMP/err" "page\.html: cannot write"
[ "$(wc -l <"$TMP/err")" -eq 1 ] || fail "unwritable page: want one line"
echo "ok"
