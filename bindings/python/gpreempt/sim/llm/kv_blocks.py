"""The paged KV cache's budget: a fixed number of blocks of `block_size` tokens, held per request
(vLLM's KVCacheManager without prefix caching). Pure bookkeeping: the model's cache tensors are
attention.KVPool's."""


class BlockBudget:
    def __init__(self, blocks, block_size=16):
        if blocks < 1 or block_size < 1:
            raise ValueError("the KV cache needs at least one block of at least one token "
                             "(got %r blocks of %r tokens)" % (blocks, block_size))
        self.blocks = blocks
        self.block_size = block_size
        self.free = blocks
        self._held = {}

    def blocks_for(self, tokens):
        return -(-tokens // self.block_size)

    def held(self, owner):
        return self._held.get(owner, 0)

    def grow(self, owner, tokens):
        """Make `owner` hold enough blocks for `tokens` tokens; False (and nothing taken) when the
        free blocks do not suffice."""
        need = self.blocks_for(tokens) - self.held(owner)
        if need <= 0:
            return True
        if need > self.free:
            return False
        self.free -= need
        self._held[owner] = self.held(owner) + need
        return True

    def release(self, owner):
        self.free += self._held.pop(owner, 0)

    @property
    def used(self):
        return self.blocks - self.free
