/* The plainest C of the rules, the yardstick of take5.core (bench/cproto.py compiles and runs it).
 *
 *   proto games PLAYERS SECONDS        random games of the standard variant, threshold 66
 *   proto rollouts PLAYERS SECONDS N   rest-of-round rollouts from turn 1 on N prepared deals, each
 *                                      seat greedy or (half of the time) a random card
 *
 * Prints the units per CPU-second (clock()) of about SECONDS of work. No checks, no records, no
 * views: a deck, four rows as (end, length, bull heads), hands as arrays, SplitMix64 for chance.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint64_t rng_state = 1;

static uint64_t next_u64(void) {
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static int below(int n) { return (int)(next_u64() % (uint64_t)n); }
static double uniform(void) { return (double)(next_u64() >> 11) / 9007199254740992.0; }

static int heads_of(int c) {
    if (c == 55) return 7;
    if (c % 11 == 0) return 5;
    if (c % 10 == 0) return 3;
    if (c % 5 == 0) return 2;
    return 1;
}

static int bull[105];
static int end[4], len[4], heads[4];

/* Place card c; return the bull heads taken. row: the row a low card takes. */
static int place(int c, int row) {
    int b = -1, be = 0;
    for (int r = 0; r < 4; r++)
        if (be < end[r] && end[r] < c) b = r, be = end[r];
    if (b < 0 || len[b] == 5) {
        if (b < 0) b = row;
        int taken = heads[b];
        end[b] = c, len[b] = 1, heads[b] = bull[c];
        return taken;
    }
    end[b] = c, len[b]++, heads[b] += bull[c];
    return 0;
}

static int cheapest(void) {
    int b = 0;
    for (int r = 1; r < 4; r++)
        if (heads[r] * 8 + len[r] < heads[b] * 8 + len[b]) b = r;
    return b;
}

static int cmp(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }

static void game(int n) {
    int score[10] = {0}, deck[104], hand[10][10], top = 0;
    while (top < 66) {
        for (int i = 0; i < 104; i++) deck[i] = i + 1;
        for (int i = 103; i > 0; i--) {
            int j = below(i + 1), t = deck[i];
            deck[i] = deck[j], deck[j] = t;
        }
        for (int p = 0; p < n; p++) memcpy(hand[p], deck + 10 * p, sizeof hand[p]);
        for (int r = 0; r < 4; r++) end[r] = deck[10 * n + r], len[r] = 1, heads[r] = bull[end[r]];
        for (int held = 10; held > 0; held--) {
            int plays[10];
            for (int p = 0; p < n; p++) {
                int i = below(held);
                plays[p] = hand[p][i] * 16 + p;
                hand[p][i] = hand[p][held - 1];
            }
            qsort(plays, n, sizeof(int), cmp);
            for (int k = 0; k < n; k++) score[plays[k] & 15] += place(plays[k] >> 4, below(4));
        }
        for (int p = 0; p < n; p++) top = score[p] > top ? score[p] : top;
    }
}

static void rollout(int n, const int *table, const int *deal) {
    int hand[10][10], pts[10] = {0};
    memcpy(end, table, 4 * sizeof(int));
    memcpy(len, table + 4, 4 * sizeof(int));
    memcpy(heads, table + 8, 4 * sizeof(int));
    memcpy(hand, deal, sizeof hand);
    for (int held = 10; held > 0; held--) {
        int plays[10];
        for (int p = 0; p < n; p++) {
            int i = 0;
            if (held > 1 && uniform() < 0.5) {
                i = (int)(uniform() * held);
            } else if (held > 1) { /* greedy: fewest bull heads now, then closest to its row */
                int best = 1 << 30, low = heads[cheapest()] * 256 + 150;
                for (int k = 0; k < held; k++) {
                    int c = hand[p][k], b = -1, be = 0, key;
                    for (int r = 0; r < 4; r++)
                        if (be < end[r] && end[r] < c) b = r, be = end[r];
                    key = b < 0 ? low + c : (len[b] == 5 ? heads[b] * 256 : 0) + c - be;
                    if (key < best) best = key, i = k;
                }
            }
            plays[p] = hand[p][i] * 16 + p;
            hand[p][i] = hand[p][held - 1];
        }
        qsort(plays, n, sizeof(int), cmp);
        for (int k = 0; k < n; k++) pts[plays[k] & 15] += place(plays[k] >> 4, cheapest());
    }
}

int main(int argc, char **argv) {
    if (argc < 4) return 2;
    int n = atoi(argv[2]), size = argc > 4 ? atoi(argv[4]) : 1, games = !strcmp(argv[1], "games");
    double seconds = atof(argv[3]);
    for (int c = 1; c <= 104; c++) bull[c] = heads_of(c);
    int table[12], base[104], *deals = malloc(sizeof(int) * 100 * (size_t)size);
    for (int i = 0; i < 104; i++) base[i] = i + 1;
    for (int i = 103; i > 0; i--) {
        int j = below(i + 1), t = base[i];
        base[i] = base[j], base[j] = t;
    }
    for (int r = 0; r < 4; r++) table[r] = base[r], table[4 + r] = 1, table[8 + r] = bull[base[r]];
    for (int d = 0; d < size; d++) { /* each deal: the other 100 cards shuffled, hands first */
        int *deck = deals + 100 * d;
        memcpy(deck, base + 4, 100 * sizeof(int));
        for (int i = 99; i > 0; i--) {
            int j = below(i + 1), t = deck[i];
            deck[i] = deck[j], deck[j] = t;
        }
    }
    long done = 0;
    clock_t start = clock();
    double used = 0;
    while (used < seconds) {
        if (games) {
            for (int k = 0; k < 20; k++) game(n);
            done += 20;
        } else {
            for (int d = 0; d < size; d++) rollout(n, table, deals + 100 * d);
            done += size;
        }
        used = (double)(clock() - start) / CLOCKS_PER_SEC;
    }
    printf("%.1f\n", done / used);
    free(deals);
    return 0;
}
