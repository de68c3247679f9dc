r"""Small PyTorch Transformers and their Sinkformer counterparts (thesis, chapter 5, §5.3 and §5.6).

One attention module serves every experiment of the chapter: its normalisation is Sinkhorn's algorithm
(5.3) run for ``n_iter`` iterations in the log domain (Appendix 5.B, Eq. (5.13)), starting with a row
normalisation, so that ``n_iter = 1`` is the SoftMax of a Transformer and an odd ``n_iter > 1`` a Sinkformer
whose attention stays row stochastic (§5.6.1: only odd counts are used).

* :func:`sinkhorn_log`: the normalisation, differentiable by automatic differentiation.
* :class:`Attention`: multi-head self-attention (optionally recording its attention matrices, for the column
  sums of Fig. 5.2).
* :class:`Encoder`: pre-norm blocks ``x + Attn(LN x)``, ``x + MLP(LN x)``; ``mlp=False`` and ``norm=False``
  keep the attention alone (the one-layer, one-head, no-nonlinearity module of Fig. 5.6).
* :class:`ViT`: patches of an image, a linear embedding, positional embeddings, the encoder, a read-out (a class
  token, or the mean of the tokens: then one patch is one token and the attention matrix is 1 x 1, §5.6.4, but a
  Sinkformer's last attention layer is invisible to the head) and a linear head.
* :class:`TextClassifier`: token embedding, encoder, max pooling over the sequence (the IMDb model of §5.6.2).
* :class:`SetTransformer`: two ISAB blocks, a SAB and a PMA (the ModelNet 40 model of §5.6.1).
* :class:`Seq2Seq`: an encoder with Sinkhorn attention and a causal SoftMax decoder (§5.6.3: Sinkhorn only in
  the encoder, the decoder's mask forbids it).
"""

from __future__ import annotations

import math

__all__ = ["sinkhorn_log", "Attention", "Encoder", "ViT", "TextClassifier", "SetTransformer", "Seq2Seq",
           "patchify"]


def _torch():
    import torch

    return torch


def sinkhorn_log(logits, n_iter: int, mask=None):
    r"""Sinkhorn's algorithm (thesis Eq. (5.3)) on the last two axes of ``logits``, in the log domain (5.13).

    Iteration ``l = 0, 1, ...`` normalises the rows when ``l`` is even and the columns when ``l`` is odd;
    ``n_iter = 1`` is the row SoftMax ``K^1``.

    Parameters
    ----------
    logits : torch.Tensor
        ``(..., n, m)`` logits ``C``.
    n_iter : int
        Number of normalisations, at least 1.
    mask : torch.Tensor or None
        Boolean ``(..., n, m)`` (broadcastable), True where a key is masked out (padding); those entries get
        the weight 0.

    Returns
    -------
    torch.Tensor
        ``K^{n_iter}``, the same shape as ``logits``.
    """
    torch = _torch()
    if not isinstance(n_iter, int) or isinstance(n_iter, bool) or n_iter < 1:
        raise ValueError(f"`n_iter` of sinkhorn_log must be an integer >= 1; got {n_iter!r}")
    if mask is None:
        log_k = logits
        for l in range(n_iter):
            log_k = log_k - torch.logsumexp(log_k, dim=-1 if l % 2 == 0 else -2, keepdim=True)
        return torch.exp(log_k)
    mask = mask.expand_as(logits)
    # a row (column) masked throughout is given finite logits inside the log-sum-exp, so that its gradient is not
    # NaN, and is masked again after each normalisation
    full = {-1: mask.all(dim=-1, keepdim=True), -2: mask.all(dim=-2, keepdim=True)}
    log_k = logits.masked_fill(mask, -math.inf)
    for l in range(n_iter):
        dim = -1 if l % 2 == 0 else -2
        safe = log_k.masked_fill(full[dim].expand_as(log_k), 0.0)
        log_k = (log_k - torch.logsumexp(safe, dim=dim, keepdim=True)).masked_fill(mask, -math.inf)
    return torch.exp(log_k).masked_fill(mask, 0.0)


def _module_base():
    return _torch().nn.Module


class Attention(_module_base()):
    """Multi-head self-attention whose normalisation is :func:`sinkhorn_log` with ``n_iter`` iterations.

    Parameters
    ----------
    dim : int
        Token dimension.
    heads : int
        Number of heads (``dim`` divisible by it).
    n_iter : int
        1: SoftMax (Transformer); more: Sinkformer.
    bias : bool
        Biases in the query, key, value and output maps.
    temperature : float
        Multiplier of the logits (1: the usual 1/sqrt(head dimension) scaling); a large value makes the
        SoftMax nearly a hard maximum (negative controls).
    """

    def __init__(self, dim: int, heads: int, n_iter: int, *, bias: bool = True, temperature: float = 1.0):
        super().__init__()
        torch = _torch()
        if dim % heads:
            raise ValueError(f"`dim` ({dim}) must be divisible by `heads` ({heads})")
        self.heads, self.n_iter, self.scale = heads, n_iter, temperature * (dim // heads) ** -0.5
        self.qkv = torch.nn.Linear(dim, 3 * dim, bias=bias)
        self.out = torch.nn.Linear(dim, dim, bias=bias)
        self.record = False
        self.recorded = []

    def forward(self, x, y=None, key_padding=None):
        """Attention of queries ``x`` (b, n, d) to keys and values ``y`` (b, m, d) (``x`` itself by default);
        ``key_padding`` (b, m) is True at padded keys."""
        b, n, d = x.shape
        h = self.heads
        if y is None:
            q, k, v = self.qkv(x).chunk(3, dim=-1)
        else:
            w_q, w_kv = self.qkv.weight.split([d, 2 * d])
            b_q, b_kv = (self.qkv.bias.split([d, 2 * d]) if self.qkv.bias is not None else (None, None))
            torch = _torch()
            q = torch.nn.functional.linear(x, w_q, b_q)
            k, v = torch.nn.functional.linear(y, w_kv, b_kv).chunk(2, dim=-1)
        m = k.shape[1]
        q, k, v = (t.reshape(b, -1, h, d // h).transpose(1, 2) for t in (q, k, v))
        logits = (q @ k.transpose(-1, -2)) * self.scale
        mask = None
        if key_padding is not None:  # padded keys, and for self-attention padded queries too
            mask = key_padding[:, None, None, :].expand(b, h, n, m)
            if y is None:
                mask = mask | key_padding[:, None, :, None]
        attn = sinkhorn_log(logits, self.n_iter, mask)
        if self.record:
            self.recorded.append(attn.detach())
        return self.out((attn @ v).transpose(1, 2).reshape(b, n, d))


class Encoder(_module_base()):
    """``depth`` blocks ``x <- x + Attn(LN x)`` then ``x <- x + MLP(LN x)`` (pre-norm Transformer encoder).

    ``mlp=False`` drops the feed-forward part and ``norm=False`` the layer norms: with both, a block is
    ``x <- x + Attn(x)``, the attention alone with no non-linearity but its normalisation (Fig. 5.6).
    """

    def __init__(self, dim, depth, heads, n_iter, *, mlp_dim=None, mlp=True, norm=True, dropout=0.0,
                 temperature=1.0):
        super().__init__()
        torch = _torch()
        nn = torch.nn
        self.attn = nn.ModuleList(Attention(dim, heads, n_iter, temperature=temperature) for _ in range(depth))
        self.norm1 = nn.ModuleList((nn.LayerNorm(dim) if norm else nn.Identity()) for _ in range(depth))
        self.mlps = nn.ModuleList()
        if mlp:
            for _ in range(depth):
                self.mlps.append(nn.Sequential(nn.LayerNorm(dim) if norm else nn.Identity(),
                                               nn.Linear(dim, mlp_dim or 2 * dim), nn.GELU(), nn.Dropout(dropout),
                                               nn.Linear(mlp_dim or 2 * dim, dim)))

    def forward(self, x, key_padding=None):
        for i, attn in enumerate(self.attn):
            x = x + attn(self.norm1[i](x), key_padding=key_padding)
            if len(self.mlps):
                x = x + self.mlps[i](x)
        return x

    def set_record(self, flag: bool):
        """Start (True) or stop recording the attention matrices of every layer; True clears the records."""
        for a in self.attn:
            a.record = flag
            if flag:
                a.recorded = []

    def recorded(self):
        """The recorded attention matrices, a list of (b, heads, n, n) tensors over layers and calls."""
        return [t for a in self.attn for t in a.recorded]


def patchify(images, patch: int):
    """Cut ``(b, c, H, W)`` images into ``(b, (H/patch)(W/patch), c patch^2)`` flattened patches."""
    b, c, hgt, wid = images.shape
    if hgt % patch or wid % patch:
        raise ValueError(f"`patch` ({patch}) must divide the image sides ({hgt} x {wid})")
    x = images.unfold(2, patch, patch).unfold(3, patch, patch)  # b, c, H/p, W/p, p, p
    return x.permute(0, 2, 3, 1, 4, 5).reshape(b, (hgt // patch) * (wid // patch), c * patch * patch)


class ViT(_module_base()):
    r"""A Vision Transformer: linear patch embedding, learnt positional embedding, :class:`Encoder`, then a pooled
    token and a linear head (thesis §5.6.4).

    ``pool="mean"``: no class token, the mean of the output tokens. ``pool="cls"``: a learnt class token is
    prepended and read out (the pooling of the authors' published ViT; the thesis does not state one). With mean
    pooling the last attention layer of a Sinkformer is invisible to the head: its matrix K has columns summing to
    1, so :math:`\frac1n\sum_i (KV)_i=\frac1n\sum_j(\sum_iK_{ij})v_j=\frac1n\sum_jv_j`, whatever the scores;
    a one-layer Sinkformer without feed-forward part and mean pooling is then a linear function of the mean token.
    """

    def __init__(self, image_size, channels, patch, n_classes, *, dim, depth, heads, n_iter, mlp=True, norm=True,
                 mlp_dim=None, temperature=1.0, pool="mean"):
        super().__init__()
        torch = _torch()
        from .training import POOLS

        if pool not in POOLS:
            raise ValueError(f"`pool` of ViT must be one of {', '.join(map(repr, POOLS))}; got {pool!r}")
        self.patch, self.pool = patch, pool
        n_tokens = (image_size // patch) ** 2 + (pool == "cls")
        self.embed = torch.nn.Linear(channels * patch * patch, dim)
        self.pos = torch.nn.Parameter(0.02 * torch.randn(1, n_tokens, dim))
        self.cls = torch.nn.Parameter(0.02 * torch.randn(1, 1, dim)) if pool == "cls" else None
        self.encoder = Encoder(dim, depth, heads, n_iter, mlp=mlp, norm=norm, mlp_dim=mlp_dim, temperature=temperature)
        self.final_norm = torch.nn.LayerNorm(dim) if norm else torch.nn.Identity()
        self.head = torch.nn.Linear(dim, n_classes)

    def forward(self, images):
        torch = _torch()
        x = self.embed(patchify(images, self.patch))
        if self.cls is not None:
            x = torch.cat([self.cls.expand(x.shape[0], -1, -1), x], dim=1)
        x = self.final_norm(self.encoder(x + self.pos))
        return self.head(x[:, 0] if self.cls is not None else x.mean(dim=1))


class TextClassifier(_module_base()):
    """Token embedding, positional embedding, :class:`Encoder`, max pooling over the non-padded tokens and a
    linear head (the IMDb model of thesis §5.6.2; token 0 is padding)."""

    def __init__(self, vocab, max_len, n_classes, *, dim, depth, heads, n_iter):
        super().__init__()
        torch = _torch()
        self.embed = torch.nn.Embedding(vocab, dim, padding_idx=0)
        self.pos = torch.nn.Parameter(0.02 * torch.randn(1, max_len, dim))
        self.encoder = Encoder(dim, depth, heads, n_iter)
        self.head = torch.nn.Linear(dim, n_classes)

    def forward(self, tokens):
        pad = tokens == 0
        x = self.encoder(self.embed(tokens) + self.pos[:, : tokens.shape[1]], key_padding=pad)
        x = x.masked_fill(pad[..., None], -1e9)
        return self.head(x.max(dim=1).values)


class _MAB(_module_base()):
    """Multihead attention block of the Set Transformer: H = LN(X + Att(X, Y)), LN(H + rFF(H))."""

    def __init__(self, dim, heads, n_iter):
        super().__init__()
        nn = _torch().nn
        self.att = Attention(dim, heads, n_iter)
        self.ln0, self.ln1 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.ff = nn.Sequential(nn.Linear(dim, dim), nn.ReLU())

    def forward(self, x, y):
        h = self.ln0(x + self.att(x, y))
        return self.ln1(h + self.ff(h))


class SetTransformer(_module_base()):
    """The Set Transformer of thesis §5.6.1 (Lee et al.'s ModelNet 40 model): an encoder of two ISAB blocks
    (``inducing`` points), a decoder made of a PMA (one seed vector) and a SAB, and a linear head; every
    attention normalised by Sinkhorn with ``n_iter`` iterations."""

    def __init__(self, in_dim, n_classes, *, dim, heads, inducing, n_iter):
        super().__init__()
        torch = _torch()
        nn = torch.nn
        self.proj = nn.Linear(in_dim, dim)
        self.inducing = nn.ParameterList(nn.Parameter(torch.randn(1, inducing, dim) / math.sqrt(dim))
                                         for _ in range(2))
        self.isab = nn.ModuleList(nn.ModuleList([_MAB(dim, heads, n_iter), _MAB(dim, heads, n_iter)])
                                  for _ in range(2))
        self.seed = nn.Parameter(torch.randn(1, 1, dim) / math.sqrt(dim))
        self.pma = _MAB(dim, heads, n_iter)
        self.sab = _MAB(dim, heads, n_iter)
        self.head = nn.Linear(dim, n_classes)

    def attentions(self):
        return [m for m in self.modules() if isinstance(m, Attention)]

    def forward(self, points):
        x = self.proj(points)
        for ind, (mab0, mab1) in zip(self.inducing, self.isab):
            h = mab0(ind.expand(x.shape[0], -1, -1), x)
            x = mab1(x, h)
        y = self.pma(self.seed.expand(x.shape[0], -1, -1), x)
        y = self.sab(y, y)
        return self.head(y[:, 0])


class Seq2Seq(_module_base()):
    """An encoder-decoder Transformer for translation (thesis §5.6.3): the encoder's self-attention is
    normalised by Sinkhorn (``n_iter``), the decoder (causal, with cross-attention) keeps the SoftMax
    (PyTorch's :class:`torch.nn.TransformerDecoder`). Token 0 is padding, 1 begin, 2 end."""

    def __init__(self, src_vocab, tgt_vocab, max_len, *, dim, depth, heads, n_iter, temperature=1.0):
        super().__init__()
        torch = _torch()
        nn = torch.nn
        self.src_embed = nn.Embedding(src_vocab, dim, padding_idx=0)
        self.tgt_embed = nn.Embedding(tgt_vocab, dim, padding_idx=0)
        self.pos = nn.Parameter(0.02 * torch.randn(1, max_len + 2, dim))
        self.encoder = Encoder(dim, depth, heads, n_iter, temperature=temperature)
        self.enc_norm = nn.LayerNorm(dim)
        layer = nn.TransformerDecoderLayer(dim, heads, 2 * dim, dropout=0.0, batch_first=True, norm_first=True)
        self.decoder = nn.TransformerDecoder(layer, depth)
        self.out = nn.Linear(dim, tgt_vocab)

    def set_n_iter(self, n_iter: int):
        """Change the encoder's normalisation (a Sinkformer evaluated with a Transformer's weights)."""
        for a in self.encoder.attn:
            a.n_iter = n_iter

    def encode(self, src):
        pad = src == 0
        return self.enc_norm(self.encoder(self.src_embed(src) + self.pos[:, : src.shape[1]], key_padding=pad)), pad

    def decode(self, memory, pad, tgt_in):
        torch = _torch()
        n = tgt_in.shape[1]
        causal = torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=1)
        h = self.decoder(self.tgt_embed(tgt_in) + self.pos[:, :n], memory, tgt_mask=causal,
                         memory_key_padding_mask=pad, tgt_key_padding_mask=tgt_in == 0)
        return self.out(h)

    def forward(self, src, tgt_in):
        memory, pad = self.encode(src)
        return self.decode(memory, pad, tgt_in)

    def greedy(self, src, max_len):
        """Greedy decoding, ``max_len`` tokens at most; returns (b, max_len) token ids (0 after the end)."""
        torch = _torch()
        memory, pad = self.encode(src)
        ys = torch.ones(src.shape[0], 1, dtype=torch.long)
        done = torch.zeros(src.shape[0], dtype=torch.bool)
        for _ in range(max_len):
            nxt = self.decode(memory, pad, ys)[:, -1].argmax(-1)
            nxt = nxt.masked_fill(done, 0)
            ys = torch.cat([ys, nxt[:, None]], dim=1)
            done |= nxt == 2
            if bool(done.all()):
                break
        return ys[:, 1:]
