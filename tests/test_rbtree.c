/* SPDX-License-Identifier: MIT */
/*
 * The hrtimer queue's red-black tree: random inserts and erases against a
 * sorted reference, every invariant checked after every step; equal keys in
 * insertion order; the checker catches a broken tree.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../src/hrtimer/rbtree.h"
#include "check.h"

struct item {
	struct pw_rb_node node;
	uint64_t key;
	unsigned seq;
	int in;
};

static int cmp(const struct pw_rb_node *a, const struct pw_rb_node *b)
{
	const struct item *x = (const struct item *)a, *y = (const struct item *)b;
	return (x->key > y->key) - (x->key < y->key);
}

static void insert(struct pw__rb_root *root, struct item *it)
{
	struct pw_rb_node **link = &root->root, *parent = NULL;
	bool leftmost = true;
	while (*link) {
		parent = *link;
		if (it->key < ((struct item *)parent)->key) {
			link = &parent->pw_left;
		} else {
			link = &parent->pw_right;
			leftmost = false;
		}
	}
	pw__rb_insert(root, &it->node, parent, link, leftmost);
	it->in = 1;
}

static void test_random(void)
{
	enum { N = 3000 };
	static struct item items[N];
	struct pw__rb_root root = {0};
	uint64_t count;
	unsigned seq = 0, live = 0;

	srand(12345);
	for (int step = 0; step < 60000; step++) {
		struct item *it = &items[rand() % N];
		if (it->in) {
			pw__rb_erase(&root, &it->node);
			it->in = 0;
			live--;
		} else {
			it->key = (uint64_t)(rand() % 200); /* many equal keys */
			it->seq = seq++;
			insert(&root, it);
			live++;
		}
		if (step % 97 == 0 || step < 2000) {
			CHECK_EQ(pw__rb_check(&root, cmp, &count, "test"), 0);
			CHECK_EQ(count, live);
		}
		/* in order: keys non-decreasing, equal keys in insertion order */
		if (step % 1009 == 0) {
			const struct item *prev = NULL;
			unsigned n = 0;
			for (struct pw_rb_node *x = root.leftmost; x; x = pw__rb_next(x), n++) {
				const struct item *cur = (const struct item *)x;
				if (prev && prev->key == cur->key)
					CHECK(prev->seq < cur->seq);
				prev = cur;
			}
			CHECK_EQ(n, live);
		}
	}
	/* drain from the left, as the expiry pass does */
	while (root.leftmost) {
		struct item *first = (struct item *)root.leftmost;
		pw__rb_erase(&root, root.leftmost);
		first->in = 0;
		live--;
		CHECK_EQ(pw__rb_check(&root, cmp, &count, "test"), 0);
		CHECK_EQ(count, live);
	}
	CHECK(root.root == NULL);
}

static void test_checker_catches_corruption(void)
{
	static struct item items[16];
	struct pw__rb_root root = {0};
	uint64_t count;
	for (int i = 0; i < 16; i++) {
		items[i].key = (uint64_t)i * 10;
		insert(&root, &items[i]);
	}
	CHECK_EQ(pw__rb_check(&root, cmp, &count, "test"), 0);
	fprintf(stderr, "(the next messages are expected)\n");
	items[5].key = 1000; /* out of order */
	CHECK_EQ(pw__rb_check(&root, cmp, &count, "test"), -EFAULT);
	items[5].key = 50;
	struct pw_rb_node *lm = root.leftmost;
	root.leftmost = &items[3].node;
	CHECK_EQ(pw__rb_check(&root, cmp, &count, "test"), -EFAULT);
	root.leftmost = lm;
	root.root->pw_parent_color ^= 1; /* red root */
	CHECK_EQ(pw__rb_check(&root, cmp, &count, "test"), -EFAULT);
	root.root->pw_parent_color ^= 1;
	CHECK_EQ(pw__rb_check(&root, cmp, &count, "test"), 0);
}

int main(void)
{
	RUN(test_random);
	RUN(test_checker_catches_corruption);
	return 0;
}
