"""hf_decode - greedy decoding with a Hugging Face transformers decoder-only LM:
GPT-2 small's configuration (12 layers, d_model 768, 12 heads, vocabulary
50257) with random weights, built from the config, so nothing is downloaded
(HF_HUB_OFFLINE=1 is set). One iteration generates --tokens new tokens after a
fixed random prompt of --prompt tokens, batch 1; every iteration is the same
decode, so the launch stream repeats per iteration.

--cache static|dynamic picks the KV cache: static preallocates it (StaticCache,
shapes fixed), dynamic is transformers' default (DynamicCache: the keys and
values grow by one token each step, so shapes change every token).
--mode:
  eager    model.generate(), as an unmodified script calls it (greedy, with
           disable_compile=True: transformers would otherwise compile the
           static-cache forward by itself);
  graph    static cache only: a hand-written decode loop whose one-token step
           (forward, argmax, position and token updates) is captured once with
           torch.cuda.graph and replayed; the prefill runs eagerly;
  compile  static cache only: the same loop with the one-token forward under
           torch.compile(mode="reduce-overhead").
--check runs the model once over the whole generated sequence without a cache
(teacher forcing) in the same process and checks that every generated token is
the argmax of its position's logits, up to --tol times the largest logit.
The result line has a hash of the generated tokens and how many distinct
sequences the timed iterations produced (1 when every decode agrees).
"""
import hashlib
import os

import py_common
from torch_common import import_torch, timed

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # random weights: nothing to fetch
DEVICE = "cuda"


def build(torch, args):
    from transformers import GPT2Config, GPT2LMHeadModel
    torch.manual_seed(10)
    config = GPT2Config()  # GPT-2 small
    model = GPT2LMHeadModel(config).eval().to(DEVICE)
    # Random weights emit the end-of-text token like any other: generate
    # exactly --tokens tokens every time, as the hand-written loops do.
    model.generation_config.eos_token_id = None
    model.generation_config.pad_token_id = 0
    g = torch.Generator().manual_seed(11)
    prompt = torch.randint(0, config.vocab_size, (1, args.prompt), generator=g).to(DEVICE)
    return model, prompt


def generate_eager(torch, model, prompt, args):
    """One iteration of --mode eager: model.generate()."""
    mask = torch.ones_like(prompt)
    cache = "static" if args.cache == "static" else None

    def iteration():
        with torch.no_grad():
            return model.generate(prompt, attention_mask=mask, max_new_tokens=args.tokens,
                                  do_sample=False, cache_implementation=cache,
                                  disable_compile=True)
    return iteration


def generate_static_loop(torch, model, prompt, args):
    """One iteration of --mode graph or compile: prefill eagerly, then
    --tokens - 1 one-token steps on a StaticCache with fixed-address inputs."""
    from transformers import StaticCache
    p, length = args.prompt, args.prompt + args.tokens
    cache = StaticCache(config=model.config, max_cache_len=length)
    seq = torch.zeros(1, length, dtype=torch.long, device=DEVICE)
    seq[:, :p] = prompt
    tok = torch.zeros(1, 1, dtype=torch.long, device=DEVICE)  # the last token
    pos = torch.zeros(1, 1, dtype=torch.long, device=DEVICE)  # its position
    slots = torch.arange(length, device=DEVICE)
    # The prefill's additive 4D mask over the cache's slots, which transformers
    # uses as given: a query at position q sees the slots 0..q. It runs eagerly,
    # and a mask of transformers' own would cost a host sync (its is_causal skip
    # reads the cache's count).
    prefill_mask = torch.where(slots[None, :] <= slots[:p, None], 0.0,
                               torch.finfo(torch.float32).min)[None, None]

    # No attention_mask: transformers builds the causal mask itself, as generate() has it do,
    # from the StaticCache's own device-side count of cached tokens (a tensor that the cache
    # advances in place), so a replay masks the slots after its own position. The additive
    # 4D float mask built here from `pos` before was lost in the captured step: the replayed
    # tokens (seq_sha256=b4c496da91dde70d, token_sum=1162470 for --tokens 32, runs 4-6 and
    # d2d335d) are exactly those of a decode whose one-token steps see every slot of the
    # cache, the zeroed unwritten ones included, with the right positions and write slots.
    # Nor is there a cache_position: transformers 5 takes none (the keyword is passed on
    # unused); StaticLayer.update writes at its cumulative_length.
    def forward_one(tok, pos):
        logits = model(input_ids=tok, position_ids=pos, past_key_values=cache,
                       use_cache=True).logits
        return logits[:, -1].argmax(-1, keepdim=True)

    def advance(nxt):
        pos.add_(1)
        seq.copy_(torch.where(slots == pos, nxt, seq))  # seq[pos] = nxt, no host index
        tok.copy_(nxt)

    def prefill():
        cache.reset()
        logits = model(input_ids=seq[:, :p], attention_mask=prefill_mask,
                       position_ids=slots[None, :p], past_key_values=cache,
                       use_cache=True).logits
        pos.fill_(p - 1)
        advance(logits[:, -1].argmax(-1, keepdim=True))

    if args.mode == "graph":
        def step():
            advance(forward_one(tok, pos))
        # Warm up on a side stream (the static cache allocates on first use),
        # then capture one step. No more steps than the cache has slots for.
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side), torch.no_grad():
            prefill()
            for _ in range(min(3, args.tokens - 1)):
                step()
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.no_grad(), torch.cuda.graph(graph):
            step()
        step = graph.replay
    else:
        compiled = torch.compile(forward_one, mode="reduce-overhead")

        def step():
            torch.compiler.cudagraph_mark_step_begin()
            advance(compiled(tok, pos))

    def iteration():
        with torch.no_grad():
            prefill()
            for _ in range(args.tokens - 1):
                step()
        return seq
    return iteration


def check_greedy(torch, model, seq, args):
    """The largest gap, relative to the largest logit, between a position's
    top logit and the logit of the token that was generated after it."""
    with torch.no_grad():
        logits = model(input_ids=seq[:, :-1], use_cache=False).logits[0].double()
    first = args.prompt - 1  # the position whose logits chose the first new token
    chosen = seq[0, first + 1:]
    rows = logits[first:]
    gap = rows.max(dim=-1).values - rows.gather(1, chosen[:, None]).squeeze(1)
    return (gap.max() / logits.abs().max()).item()


def main():
    p = py_common.parser(__doc__, default_iters=7, modes=("eager", "graph", "compile"))
    p.set_defaults(warmup=3)
    p.add_argument("--cache", choices=("static", "dynamic"), default="static",
                   help="KV cache: static (preallocated) or dynamic (the default cache)")
    p.add_argument("--tokens", type=int, default=64, help="new tokens per iteration (>= 2)")
    p.add_argument("--prompt", type=int, default=16, help="prompt tokens (>= 1)")
    p.add_argument("--tol", type=float, default=1e-4,
                   help="--check: largest allowed top-logit gap over the largest logit")
    args = py_common.parse(p)
    if args.tokens < 2 or args.prompt < 1:
        p.error("--tokens must be >= 2 and --prompt >= 1")
    if args.mode != "eager" and args.cache != "static":
        p.error(f"--mode {args.mode} needs --cache static (dynamic shapes cannot be replayed)")

    # Greedy decoding is deterministic as it is (cuBLAS with a fixed workspace,
    # attention and argmax without atomics), and generate() in real use runs
    # without torch.use_deterministic_algorithms, so it stays off here.
    torch = import_torch("hf_decode", deterministic_algorithms=False)
    model, prompt = build(torch, args)
    make = generate_eager if args.mode == "eager" else generate_static_loop
    iteration = make(torch, model, prompt, args)
    outputs = []

    def recorded():
        # Keep every iteration's tokens (a copy: the loops reuse one buffer);
        # they are compared after the timed loop, so nothing here waits.
        outputs.append(iteration().clone())
        return outputs[-1]

    for _ in range(args.warmup):
        iteration()
    seq, total_ms = timed(torch, args.iters, recorded)

    tokens = seq[0].cpu()
    distinct = len({tuple(s[0].tolist()) for s in outputs})
    check = "skipped"
    if args.check:
        check = py_common.check_line("hf_decode", check_greedy(torch, model, seq, args),
                                     args.tol, "max_gap")
        if distinct != 1:
            check = "FAIL"
    digest = hashlib.sha256(tokens.numpy().astype("<i8").tobytes()).hexdigest()[:16]
    fields = (f"cache={args.cache} prompt={args.prompt} tokens={args.tokens} "
              f"seq_sha256={digest} token_sum={int(tokens.sum())} distinct={distinct}")
    py_common.report("hf_decode", args.mode, args.iters, fields, check, total_ms)


if __name__ == "__main__":
    main()
