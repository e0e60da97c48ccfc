// Package measure holds the benchmark harness's measuring primitives: alternating A/B runs, child
// processes timed with their peak resident memory, and the order statistics used to summarise them.
//
// The method, so that every figure in an artifact can be read the same way:
//
//   - Comparisons alternate their arms (A B A B …, or A B C A B C … for more arms), so slow drift
//     of a shared machine (other builds, thermal limits, page-cache churn) lands on every arm alike.
//   - Each arm is summarised by its median and its spread: min–max and the interquartile range.
//     A ratio is the ratio of medians. A single absolute time is never a claim.
//   - Quantiles interpolate linearly between the closest ranks (Hyndman & Fan type 7, the default of
//     numpy and R): for sorted x[0..n-1], q(p) = x[h] + (h-⌊h⌋)(x[⌊h⌋+1]-x[⌊h⌋]) with h = (n-1)p.
//     The median is q(0.5) and the per-call latencies p50 and p99 are q(0.50) and q(0.99).
//   - A child process's peak resident set is the kernel's ru_maxrss for that child (KiB on Linux),
//     read from its rusage after it exits: the high-water mark of the process, not a sample.
package measure
