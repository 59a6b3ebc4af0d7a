/* take5._core: the compiled core of the SDK's simulators (see take5/core.py, its only importer).
 *
 * Two functions, each the exact twin of a pure-Python reference that stays the rule book:
 *
 *   random_game(players, professional, threshold, above, seed, rotation, player_seeds, trace)
 *       one whole game of `take5.play_game` with `take5.RandomPlayer(player_seeds[seat])` at every
 *       seat: the same deals (SplitMix64 from `seed`, docs/record-format.md), the same decisions
 *       (each seat's own SplitMix64), the same placing and end; returns (scores, rounds, trace)
 *       where trace is every decision in order (bytes) when asked, else None.
 *   rollouts(ends, lens, heads, hands, deals, players, size, randomness, seed, first)
 *       `take5.sim.play_out` for each of `deals` deals from one table, one after the other, with
 *       one `SplitMix64(seed)` as the random generator (its `random()`: the top 53 bits of a draw
 *       over 2**53); hands is a buffer of deals * players * size signed bytes, first None or a
 *       buffer of deals * players signed bytes (0: no forced card); returns the points as a
 *       bytearray of deals * players native int32.
 *
 * Plain C99 and the stable parts of the C API only: no numpy headers, so that building it needs
 * nothing but a C compiler and Python's headers. Every limit is checked before any work, and the
 * work itself touches only fixed-size local arrays.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

/* Bumped whenever the meaning of a function here changes: take5/core.py refuses another. */
#define CORE_VERSION 1

#define DECK 104
#define HAND 10
#define ROWS 4
#define FULL 5
#define MAX_ROUNDS 1000
#define MAX_SEATS 10
#define MAX_SIM_SEATS 16
#define MAX_SIM_HAND 16

static const unsigned char BULL[DECK + 1] = {
    0, 1, 1, 1, 1, 2, 1, 1, 1, 1, 3, 5, 1, 1, 1, 2, 1, 1, 1, 1, 3, 1, 5, 1, 1, 2, 1,
    1, 1, 1, 3, 1, 1, 5, 1, 2, 1, 1, 1, 1, 3, 1, 1, 1, 5, 2, 1, 1, 1, 1, 3, 1, 1, 1,
    1, 7, 1, 1, 1, 1, 3, 1, 1, 1, 1, 2, 5, 1, 1, 1, 3, 1, 1, 1, 1, 2, 1, 5, 1, 1, 3,
    1, 1, 1, 1, 2, 1, 1, 5, 1, 3, 1, 1, 1, 1, 2, 1, 1, 1, 5, 3, 1, 1, 1, 1};

/* -- SplitMix64, as take5/shuffle.py states it ------------------------------------------------ */

static inline uint64_t next_u64(uint64_t *state) {
    uint64_t z = (*state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* A uniform integer below n (n >= 1) by rejection: keep x < 2**64 - (2**64 mod n). Since
 * 2**64 mod n < n, every x < 2**64 - n is kept without working out the bound (one division). */
static inline int below(uint64_t *state, uint64_t n) {
    for (;;) {
        uint64_t x = next_u64(state);
        if (x < (uint64_t)0 - n) return (int)(x % n);
        uint64_t rem = (UINT64_MAX % n + 1) % n; /* 2**64 mod n */
        if (rem == 0 || x < (uint64_t)0 - rem) return (int)(x % n);
    }
}

/* SplitMix64.random(): 53 bits over 2**53, in [0, 1). */
static inline double uniform(uint64_t *state) {
    return (double)(next_u64(state) >> 11) * (1.0 / 9007199254740992.0);
}

/* -- one game of random players ------------------------------------------------------------- */

typedef struct {
    int end[ROWS], len[ROWS], heads[ROWS];
} Table;

static inline int target_row(const Table *t, int card) {
    int best = -1, best_end = 0;
    for (int r = 0; r < ROWS; r++) {
        if (best_end < t->end[r] && t->end[r] < card) best = r, best_end = t->end[r];
    }
    return best;
}

static inline int take_row(Table *t, int r, int card) {
    int taken = t->heads[r];
    t->end[r] = card;
    t->len[r] = 1;
    t->heads[r] = BULL[card];
    return taken;
}

static void sort_ints(int *a, int n) {
    for (int i = 1; i < n; i++) {
        int v = a[i], j = i;
        for (; j > 0 && a[j - 1] > v; j--) a[j] = a[j - 1];
        a[j] = v;
    }
}

static inline void remove_at(int *a, int *len, int i) {
    memmove(a + i, a + i + 1, (size_t)(*len - i - 1) * sizeof(int));
    (*len)--;
}

static PyObject *random_game(PyObject *self, PyObject *args) {
    int n, professional, threshold, above, rotation, trace;
    unsigned long long seed;
    PyObject *seeds_obj;
    if (!PyArg_ParseTuple(args, "ipipKiOp", &n, &professional, &threshold, &above, &seed,
                          &rotation, &seeds_obj, &trace))
        return NULL;
    if (n < 2 || n > (professional ? 6 : MAX_SEATS) || rotation < 0 || rotation >= n) {
        PyErr_SetString(PyExc_ValueError, "players or rotation out of range");
        return NULL;
    }
    PyObject *seeds_seq = PySequence_Fast(seeds_obj, "player_seeds must be a sequence");
    if (seeds_seq == NULL) return NULL;
    if (PySequence_Fast_GET_SIZE(seeds_seq) != n) {
        Py_DECREF(seeds_seq);
        PyErr_SetString(PyExc_ValueError, "one player seed per seat");
        return NULL;
    }
    uint64_t deal = seed, mine[MAX_SEATS];
    for (int s = 0; s < n; s++) {
        mine[s] = PyLong_AsUnsignedLongLongMask(PySequence_Fast_GET_ITEM(seeds_seq, s));
        if (PyErr_Occurred()) {
            Py_DECREF(seeds_seq);
            return NULL;
        }
    }
    Py_DECREF(seeds_seq);

    /* The trace: at most 1000 rounds of 10n card plays, 10n draft picks and 10n row choices. */
    unsigned char *log = NULL;
    size_t logged = 0;
    if (trace) {
        log = PyMem_Malloc((size_t)MAX_ROUNDS * 3 * HAND * (size_t)n);
        if (log == NULL) return PyErr_NoMemory();
    }
#define LOG(v)                                        \
    do {                                              \
        if (log) log[logged++] = (unsigned char)(v); \
    } while (0)

    int scores[MAX_SEATS] = {0}, hands[MAX_SEATS][HAND], held[MAX_SEATS], round = 0;
    Table t;
    for (;;) {
        round++;
        if (professional) {
            int pool[6 * HAND + ROWS], left = HAND * n + ROWS;
            for (int i = 0; i < left; i++) pool[i] = i + 1;
            for (int s = 0; s < n; s++) held[s] = 0;
            int first = (round - 1 + rotation) % n;
            for (int pick = 0; pick < HAND * n; pick++) {
                int s = (first + pick) % n;
                int i = below(&mine[s], (uint64_t)left);
                LOG(pool[i]);
                hands[s][held[s]++] = pool[i];
                remove_at(pool, &left, i);
            }
            for (int s = 0; s < n; s++) sort_ints(hands[s], HAND);
            for (int r = 0; r < ROWS; r++) { /* the pool is still in ascending order */
                t.end[r] = pool[r], t.len[r] = 1, t.heads[r] = BULL[pool[r]];
            }
        } else {
            int cards[DECK];
            for (int i = 0; i < DECK; i++) cards[i] = i + 1;
            for (int i = DECK - 1; i > 0; i--) {
                int j = below(&deal, (uint64_t)i + 1), v = cards[i];
                cards[i] = cards[j], cards[j] = v;
            }
            for (int p = 0; p < n; p++) {
                int s = (p + rotation) % n;
                memcpy(hands[s], cards + p * HAND, sizeof(int) * HAND);
                sort_ints(hands[s], HAND);
                held[s] = HAND;
            }
            for (int r = 0; r < ROWS; r++) {
                int c = cards[n * HAND + r];
                t.end[r] = c, t.len[r] = 1, t.heads[r] = BULL[c];
            }
        }
        int points[MAX_SEATS] = {0};
        for (int turn = 0; turn < HAND; turn++) {
            int plays[MAX_SEATS];
            for (int s = 0; s < n; s++) {
                int i = below(&mine[s], (uint64_t)held[s]);
                LOG(hands[s][i]);
                plays[s] = hands[s][i] * 16 + s;
                remove_at(hands[s], &held[s], i);
            }
            sort_ints(plays, n);
            for (int k = 0; k < n; k++) {
                int card = plays[k] >> 4, s = plays[k] & 15, r = target_row(&t, card);
                if (r < 0) {
                    r = below(&mine[s], ROWS);
                    LOG(r);
                    points[s] += take_row(&t, r, card);
                } else if (t.len[r] >= FULL) {
                    points[s] += take_row(&t, r, card);
                } else {
                    t.end[r] = card, t.len[r]++, t.heads[r] += BULL[card];
                }
            }
        }
        int top = 0;
        for (int s = 0; s < n; s++) {
            scores[s] += points[s];
            if (scores[s] > top) top = scores[s];
        }
        if ((above ? top > threshold : top >= threshold) || round >= MAX_ROUNDS) break;
    }
#undef LOG
    PyObject *result = PyTuple_New(n);
    if (result == NULL) {
        PyMem_Free(log);
        return NULL;
    }
    for (int s = 0; s < n; s++) PyTuple_SET_ITEM(result, s, PyLong_FromLong(scores[s]));
    PyObject *out;
    if (log) {
        out = Py_BuildValue("(Niy#)", result, round, (const char *)log, (Py_ssize_t)logged);
        PyMem_Free(log);
    } else {
        out = Py_BuildValue("(NiO)", result, round, Py_None);
    }
    return out;
}

/* -- rest-of-round rollouts: take5.sim.play_out, deal after deal -------------------------- */

static PyObject *rollouts(PyObject *self, PyObject *args) {
    Py_buffer ends_b, lens_b, heads_b, hands_b, first_b = {0};
    Py_ssize_t deals;
    int n, size;
    unsigned long long seed;
    PyObject *eps_obj, *first_obj;
    if (!PyArg_ParseTuple(args, "y*y*y*y*niiOKO", &ends_b, &lens_b, &heads_b, &hands_b, &deals,
                          &n, &size, &eps_obj, &seed, &first_obj))
        return NULL;
    PyObject *out = NULL;
    double eps[MAX_SIM_SEATS];
    int has_first = first_obj != Py_None;
    if (has_first && PyObject_GetBuffer(first_obj, &first_b, PyBUF_SIMPLE) < 0) goto done;
    /* deals is bounded first, so that none of the products below can overflow. */
    if (ends_b.len != ROWS || lens_b.len != ROWS || heads_b.len != ROWS || deals < 0 ||
        deals > PY_SSIZE_T_MAX / (MAX_SIM_SEATS * MAX_SIM_HAND * 4) || n < 1 ||
        n > MAX_SIM_SEATS || size < 0 || size > MAX_SIM_HAND ||
        hands_b.len != deals * n * size || (has_first && first_b.len != deals * n)) {
        PyErr_SetString(PyExc_ValueError, "rollouts: arguments of the wrong size");
        goto done;
    }
    PyObject *eps_seq = PySequence_Fast(eps_obj, "randomness must be a sequence");
    if (eps_seq == NULL) goto done;
    if (PySequence_Fast_GET_SIZE(eps_seq) != n) {
        Py_DECREF(eps_seq);
        PyErr_SetString(PyExc_ValueError, "rollouts: one randomness per seat");
        goto done;
    }
    for (int s = 0; s < n; s++) eps[s] = PyFloat_AsDouble(PySequence_Fast_GET_ITEM(eps_seq, s));
    Py_DECREF(eps_seq);
    if (PyErr_Occurred()) goto done;
    const signed char *all_hands = hands_b.buf, *all_first = has_first ? first_b.buf : NULL;
    for (Py_ssize_t i = 0; i < hands_b.len; i++) {
        if (all_hands[i] < 1 || all_hands[i] > DECK) {
            PyErr_SetString(PyExc_ValueError, "rollouts: a hand holds no such card");
            goto done;
        }
    }
    for (Py_ssize_t i = 0; all_first && i < deals * n; i++) {
        int found = all_first[i] == 0;
        for (int k = 0; k < size && !found; k++) found = all_hands[i * size + k] == all_first[i];
        if (!found) {
            PyErr_SetString(PyExc_ValueError, "rollouts: a first card that is not in its hand");
            goto done;
        }
    }
    out = PyByteArray_FromStringAndSize(NULL, deals * n * (Py_ssize_t)sizeof(int32_t));
    if (out == NULL) goto done;
    int32_t *pts_all = (int32_t *)PyByteArray_AS_STRING(out);
    uint64_t rng = seed;
    const unsigned char *e0 = ends_b.buf, *l0 = lens_b.buf, *h0 = heads_b.buf;
    Py_BEGIN_ALLOW_THREADS;
    for (Py_ssize_t g = 0; g < deals; g++) {
        int end[ROWS], len[ROWS], heads[ROWS], hands[MAX_SIM_SEATS][MAX_SIM_HAND];
        int32_t *pts = pts_all + g * n;
        for (int r = 0; r < ROWS; r++) end[r] = e0[r], len[r] = l0[r], heads[r] = h0[r];
        for (int s = 0; s < n; s++) {
            pts[s] = 0;
            for (int i = 0; i < size; i++) hands[s][i] = all_hands[(g * n + s) * size + i];
        }
        const signed char *first = all_first ? all_first + g * n : NULL;
        for (int held = size; held > 0; held--) {
            /* The greedy key of card c: add[j] + c, j the number of row ends below c. */
            int order[ROWS] = {0, 1, 2, 3}, sends[ROWS], add[ROWS + 1];
            for (int i = 1; i < ROWS; i++) {
                int v = order[i], j = i;
                for (; j > 0 && end[order[j - 1]] > end[v]; j--) order[j] = order[j - 1];
                order[j] = v;
            }
            int low = heads[0];
            for (int r = 1; r < ROWS; r++) low = heads[r] < low ? heads[r] : low;
            add[0] = low * 256 + 150;
            for (int i = 0; i < ROWS; i++) {
                int r = order[i];
                sends[i] = end[r];
                add[i + 1] = (len[r] >= FULL ? heads[r] * 256 : 0) - end[r];
            }
            int plays[MAX_SIM_SEATS];
            for (int s = 0; s < n; s++) {
                int *hand = hands[s], pick = -1;
                if (first && first[s]) {
                    for (int i = 0; i < held && pick < 0; i++) pick = hand[i] == first[s] ? i : -1;
                } else if (held == 1) {
                    pick = 0;
                } else if (uniform(&rng) < eps[s]) {
                    pick = (int)(uniform(&rng) * held);
                } else {
                    int best = 1 << 30;
                    for (int i = 0; i < held; i++) {
                        int c = hand[i], j = 0;
                        while (j < ROWS && sends[j] <= c) j++;
                        int key = add[j] + c;
                        if (key < best) best = key, pick = i;
                    }
                }
                plays[s] = hand[pick] * 16 + s;
                for (int i = pick; i < held - 1; i++) hand[i] = hand[i + 1];
            }
            first = NULL;
            sort_ints(plays, n);
            for (int k = 0; k < n; k++) {
                int c = plays[k] >> 4, s = plays[k] & 15, b = -1, be = 0;
                for (int r = 0; r < ROWS; r++) {
                    if (be < end[r] && end[r] < c) b = r, be = end[r];
                }
                if (b < 0) {
                    b = 0;
                    int key = heads[0] * 8 + len[0];
                    for (int r = 1; r < ROWS; r++) {
                        if (heads[r] * 8 + len[r] < key) b = r, key = heads[r] * 8 + len[r];
                    }
                    pts[s] += heads[b], end[b] = c, len[b] = 1, heads[b] = BULL[c];
                } else if (len[b] >= FULL) {
                    pts[s] += heads[b], end[b] = c, len[b] = 1, heads[b] = BULL[c];
                } else {
                    end[b] = c, len[b]++, heads[b] += BULL[c];
                }
            }
        }
    }
    Py_END_ALLOW_THREADS;
done:
    PyBuffer_Release(&ends_b);
    PyBuffer_Release(&lens_b);
    PyBuffer_Release(&heads_b);
    PyBuffer_Release(&hands_b);
    if (has_first && first_b.obj) PyBuffer_Release(&first_b);
    return out;
}

static PyMethodDef methods[] = {
    {"random_game", random_game, METH_VARARGS, "One game of random players (take5/core.py)."},
    {"rollouts", rollouts, METH_VARARGS, "take5.sim.play_out over many deals (take5/core.py)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "take5._core", "The compiled core of take5's simulators.", -1, methods,
};

PyMODINIT_FUNC PyInit__core(void) {
    PyObject *m = PyModule_Create(&module);
    if (m != NULL && PyModule_AddIntConstant(m, "VERSION", CORE_VERSION) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
