/* SPDX-License-Identifier: MIT */
/*
 * An intrusive red-black tree with a cached leftmost node: the ordered
 * queue of a CPU's hrtimers (the kernel's timerqueue).  The node lives in
 * the element, so inserting never allocates.  The caller finds the insert
 * position itself (it knows the key) and links the node; the tree only
 * rebalances.  No locking: the caller holds its base lock.  Design: rbtree.c.
 */
#ifndef PW_HRTIMER_RBTREE_H
#define PW_HRTIMER_RBTREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <pinwheel/hrtimer.h> /* struct pw_rb_node: embedded in the timer */

struct pw__rb_root {
	struct pw_rb_node *root;
	struct pw_rb_node *leftmost; /* the first element, O(1) */
};

static inline struct pw_rb_node *pw__rb_parent(const struct pw_rb_node *n)
{
	return (struct pw_rb_node *)(n->pw_parent_color & ~(uintptr_t)3);
}

/* Link @n as a red leaf at *@link under @parent (found by a descent that
 * sends equal keys right, so equal keys stay in insertion order); then
 * rebalance.  @leftmost: the descent only went left. */
void pw__rb_insert(struct pw__rb_root *root, struct pw_rb_node *n,
		   struct pw_rb_node *parent, struct pw_rb_node **link, bool leftmost);

/* Unlink @n and rebalance. */
void pw__rb_erase(struct pw__rb_root *root, struct pw_rb_node *n);

/* In-order successor, or NULL. */
struct pw_rb_node *pw__rb_next(const struct pw_rb_node *n);

/* Verify: parent links, no red node with a red child, equal black height
 * on every path, leftmost cached right, in-order keys non-decreasing by
 * @cmp (which returns <0, 0, >0).  Counts the nodes into *@count.
 * Return: 0, or -EFAULT with a message on stderr naming the broken rule. */
int pw__rb_check(const struct pw__rb_root *root,
		 int (*cmp)(const struct pw_rb_node *, const struct pw_rb_node *),
		 uint64_t *count, const char *who);

#endif /* PW_HRTIMER_RBTREE_H */
