# shellcheck shell=bash
# Shared by scripts/dev/callgrind-*.sh (sourced, not run): turning two callgrind
# runs of different lengths into per-function instructions per unit.
# Needs OUT, N1 and N2 set by the caller.

# per_unit TAG SUFFIX: (run N2 - run N1) / (N2 - N1) for every function of
# $OUT/TAG.N1 and $OUT/TAG.N2, into $OUT/TAG.SUFFIX, largest first
per_unit() {
    for n in $N1 $N2; do
        callgrind_annotate --threshold=100 --auto=no "$OUT/$1.$n" |
            awk -v n="$n" '/^ *[0-9,]+ +\( *[0-9.]+%\) +/ {v=$1; gsub(",", "", v); sub(/^ *[0-9,]+ +\( *[0-9.]+%\) +/, ""); print n "\t" v "\t" $0}'
    done | awk -F'\t' -v a="$N1" -v b="$N2" '
        { if ($1 == a) x[$3] = $2; else y[$3] = $2; k[$3] = 1 }
        END { for (f in k) { d = (y[f] - x[f]) / (b - a); if (d >= 0.5 || d <= -0.5) printf "%8.1f\t%s\n", d, f } }' |
        sort -rn >"$OUT/$1.$2"
}

# sum FILE REGEX: the functions whose line matches REGEX, added up
sum() { awk -F'\t' -v re="$2" '$2 ~ re && $2 !~ /PROGRAM TOTALS/ {s += $1} END {printf "%7.0f", s}' "$1"; }
# tot FILE: the whole program
tot() { awk -F'\t' '$2 ~ /PROGRAM TOTALS/ {printf "%7.0f", $1}' "$1"; }
