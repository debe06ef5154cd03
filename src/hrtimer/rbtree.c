/* SPDX-License-Identifier: MIT */
/*
 * Red-black tree, intrusive, with a cached leftmost node.
 *
 * Why a red-black tree for hrtimers (and not a heap): the kernel's choice,
 * and for the same reasons here.  The node is inside the timer, so starting
 * a timer never allocates and never fails (a heap needs an array that grows,
 * i.e. an allocation that can fail on the arm path, or a fixed capacity).
 * Equal deadlines fire in start order for free: the insert descent sends
 * equal keys right, so in-order traversal is FIFO without a sequence
 * number.  The first timer is O(1) through the cached leftmost; insert and
 * erase are O(log n) with at most 2 (insert) or 3 (erase) rotations.  A
 * 4-ary heap with a stored index touches fewer cache lines per operation on
 * large queues; pinwheel-bench measures the hrtimer operations so that the
 * trade can be revisited with numbers.
 *
 * Invariants (pw__rb_check()):
 *  R1 the root is black; a red node has no red child;
 *  R2 every path from a node to a leaf has the same number of black nodes;
 *  R3 each child's parent pointer names its parent;
 *  R4 in-order keys are non-decreasing;
 *  R5 leftmost is the in-order first node (NULL when empty).
 *
 * The algorithms are the textbook ones (insert fix-up by recolouring and at
 * most two rotations; erase by transplanting the successor, then a fix-up
 * that tracks the parent of a possibly NULL child).  No locking here.
 */
#include "rbtree.h"

#include <errno.h>
#include <stdio.h>

#define RB_RED   0u
#define RB_BLACK 1u

static inline unsigned colour(const struct pw_rb_node *n)
{
	return n ? (unsigned)(n->pw_parent_color & 1) : RB_BLACK; /* NULL leaves are black */
}

static inline void set_colour(struct pw_rb_node *n, unsigned c)
{
	n->pw_parent_color = (n->pw_parent_color & ~(uintptr_t)1) | c;
}

static inline void set_parent(struct pw_rb_node *n, struct pw_rb_node *p)
{
	n->pw_parent_color = (uintptr_t)p | (n->pw_parent_color & 1);
}

/* Make @v take @u's place under @u's parent. */
static void replace_child(struct pw__rb_root *root, struct pw_rb_node *u,
			  struct pw_rb_node *v)
{
	struct pw_rb_node *p = pw__rb_parent(u);
	if (!p)
		root->root = v;
	else if (p->pw_left == u)
		p->pw_left = v;
	else
		p->pw_right = v;
	if (v)
		set_parent(v, p);
}

static void rotate_left(struct pw__rb_root *root, struct pw_rb_node *x)
{
	struct pw_rb_node *y = x->pw_right;
	x->pw_right = y->pw_left;
	if (y->pw_left)
		set_parent(y->pw_left, x);
	replace_child(root, x, y);
	y->pw_left = x;
	set_parent(x, y);
}

static void rotate_right(struct pw__rb_root *root, struct pw_rb_node *x)
{
	struct pw_rb_node *y = x->pw_left;
	x->pw_left = y->pw_right;
	if (y->pw_right)
		set_parent(y->pw_right, x);
	replace_child(root, x, y);
	y->pw_right = x;
	set_parent(x, y);
}

void pw__rb_insert(struct pw__rb_root *root, struct pw_rb_node *n,
		   struct pw_rb_node *parent, struct pw_rb_node **link, bool leftmost)
{
	n->pw_parent_color = (uintptr_t)parent | RB_RED;
	n->pw_left = n->pw_right = NULL;
	*link = n;
	if (leftmost) /* atomic: glanced at without the lock (clocks_in_use()) */
		__atomic_store_n(&root->leftmost, n, __ATOMIC_RELAXED);

	struct pw_rb_node *p;
	while ((p = pw__rb_parent(n)) && colour(p) == RB_RED) {
		struct pw_rb_node *g = pw__rb_parent(p); /* exists: a red node is not the root */
		if (p == g->pw_left) {
			struct pw_rb_node *u = g->pw_right;
			if (colour(u) == RB_RED) { /* recolour and move up */
				set_colour(p, RB_BLACK);
				set_colour(u, RB_BLACK);
				set_colour(g, RB_RED);
				n = g;
				continue;
			}
			if (n == p->pw_right) {
				rotate_left(root, p);
				n = p;
				p = pw__rb_parent(n);
			}
			set_colour(p, RB_BLACK);
			set_colour(g, RB_RED);
			rotate_right(root, g);
		} else {
			struct pw_rb_node *u = g->pw_left;
			if (colour(u) == RB_RED) {
				set_colour(p, RB_BLACK);
				set_colour(u, RB_BLACK);
				set_colour(g, RB_RED);
				n = g;
				continue;
			}
			if (n == p->pw_left) {
				rotate_right(root, p);
				n = p;
				p = pw__rb_parent(n);
			}
			set_colour(p, RB_BLACK);
			set_colour(g, RB_RED);
			rotate_left(root, g);
		}
	}
	set_colour(root->root, RB_BLACK);
}

static struct pw_rb_node *leftmost_of(struct pw_rb_node *n)
{
	while (n->pw_left)
		n = n->pw_left;
	return n;
}

struct pw_rb_node *pw__rb_next(const struct pw_rb_node *n)
{
	if (n->pw_right)
		return leftmost_of(n->pw_right);
	struct pw_rb_node *p;
	while ((p = pw__rb_parent(n)) && n == p->pw_right)
		n = p;
	return p;
}

/* Restore R2 after a black node was removed above @x (which may be NULL),
 * whose parent is @xp. */
static void erase_fixup(struct pw__rb_root *root, struct pw_rb_node *x, struct pw_rb_node *xp)
{
	while (x != root->root && colour(x) == RB_BLACK) {
		/* x NULL and a right child: its sibling is not NULL (it carries
		 * the black height x lost), so xp->pw_left != x then. */
		if (x == xp->pw_left) {
			struct pw_rb_node *w = xp->pw_right;
			if (colour(w) == RB_RED) {
				set_colour(w, RB_BLACK);
				set_colour(xp, RB_RED);
				rotate_left(root, xp);
				w = xp->pw_right;
			}
			if (colour(w->pw_left) == RB_BLACK && colour(w->pw_right) == RB_BLACK) {
				set_colour(w, RB_RED);
				x = xp;
				xp = pw__rb_parent(x);
			} else {
				if (colour(w->pw_right) == RB_BLACK) {
					set_colour(w->pw_left, RB_BLACK);
					set_colour(w, RB_RED);
					rotate_right(root, w);
					w = xp->pw_right;
				}
				set_colour(w, colour(xp));
				set_colour(xp, RB_BLACK);
				set_colour(w->pw_right, RB_BLACK);
				rotate_left(root, xp);
				x = root->root;
				xp = NULL;
			}
		} else {
			struct pw_rb_node *w = xp->pw_left;
			if (colour(w) == RB_RED) {
				set_colour(w, RB_BLACK);
				set_colour(xp, RB_RED);
				rotate_right(root, xp);
				w = xp->pw_left;
			}
			if (colour(w->pw_left) == RB_BLACK && colour(w->pw_right) == RB_BLACK) {
				set_colour(w, RB_RED);
				x = xp;
				xp = pw__rb_parent(x);
			} else {
				if (colour(w->pw_left) == RB_BLACK) {
					set_colour(w->pw_right, RB_BLACK);
					set_colour(w, RB_RED);
					rotate_left(root, w);
					w = xp->pw_left;
				}
				set_colour(w, colour(xp));
				set_colour(xp, RB_BLACK);
				set_colour(w->pw_left, RB_BLACK);
				rotate_right(root, xp);
				x = root->root;
				xp = NULL;
			}
		}
	}
	if (x)
		set_colour(x, RB_BLACK);
}

void pw__rb_erase(struct pw__rb_root *root, struct pw_rb_node *z)
{
	struct pw_rb_node *x, *xp;
	unsigned removed_colour = colour(z);

	if (root->leftmost == z)
		__atomic_store_n(&root->leftmost, pw__rb_next(z), __ATOMIC_RELAXED);

	if (!z->pw_left) {
		x = z->pw_right;
		xp = pw__rb_parent(z);
		replace_child(root, z, x);
	} else if (!z->pw_right) {
		x = z->pw_left;
		xp = pw__rb_parent(z);
		replace_child(root, z, x);
	} else {
		/* Two children: the successor y takes z's place and colour. */
		struct pw_rb_node *y = leftmost_of(z->pw_right);
		removed_colour = colour(y);
		x = y->pw_right;
		if (pw__rb_parent(y) == z) {
			xp = y;
		} else {
			xp = pw__rb_parent(y);
			replace_child(root, y, y->pw_right);
			y->pw_right = z->pw_right;
			set_parent(y->pw_right, y);
		}
		replace_child(root, z, y);
		y->pw_left = z->pw_left;
		set_parent(y->pw_left, y);
		set_colour(y, colour(z));
	}
	if (removed_colour == RB_BLACK)
		erase_fixup(root, x, xp);
	z->pw_parent_color = 0;
	z->pw_left = z->pw_right = NULL;
}

/* Black height of the subtree at @n, or -1 if a rule is broken below. */
static int check_node(const struct pw_rb_node *n, const struct pw_rb_node *parent,
		      uint64_t *count, const char *who)
{
	if (!n)
		return 1;
	if (pw__rb_parent(n) != parent) {
		fprintf(stderr, "pinwheel check %s: rb node %p: wrong parent pointer (R3)\n", who,
			(const void *)n);
		return -1;
	}
	if (colour(n) == RB_RED && (colour(n->pw_left) == RB_RED || colour(n->pw_right) == RB_RED)) {
		fprintf(stderr, "pinwheel check %s: rb node %p: red with a red child (R1)\n", who,
			(const void *)n);
		return -1;
	}
	if (++*count > (1ull << 40))
		return -1;
	int l = check_node(n->pw_left, n, count, who);
	int r = check_node(n->pw_right, n, count, who);
	if (l < 0 || r < 0)
		return -1;
	if (l != r) {
		fprintf(stderr, "pinwheel check %s: rb node %p: black heights %d and %d (R2)\n", who,
			(const void *)n, l, r);
		return -1;
	}
	return l + (colour(n) == RB_BLACK);
}

int pw__rb_check(const struct pw__rb_root *root,
		 int (*cmp)(const struct pw_rb_node *, const struct pw_rb_node *),
		 uint64_t *count, const char *who)
{
	*count = 0;
	if (colour(root->root) != RB_BLACK) {
		fprintf(stderr, "pinwheel check %s: red root (R1)\n", who);
		return -EFAULT;
	}
	if (check_node(root->root, NULL, count, who) < 0)
		return -EFAULT;
	const struct pw_rb_node *first = root->root ? leftmost_of(root->root) : NULL;
	if (root->leftmost != first) {
		fprintf(stderr, "pinwheel check %s: cached leftmost %p, first is %p (R5)\n", who,
			(const void *)root->leftmost, (const void *)first);
		return -EFAULT;
	}
	for (const struct pw_rb_node *n = first, *nx; n; n = nx) {
		nx = pw__rb_next(n);
		if (nx && cmp(n, nx) > 0) {
			fprintf(stderr, "pinwheel check %s: keys out of order (R4)\n", who);
			return -EFAULT;
		}
	}
	return 0;
}
