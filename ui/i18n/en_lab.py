"""English messages of the memory LAB: fetched with the LAB (ui.packs), merged into English then."""
from __future__ import annotations

MESSAGES: dict[str, str] = {
    "lab.title": "MEMORY LAB",
    "lab.subtitle": "{dataset} at {rate} req/s, {sharing}",
    "lab.sharing.basic": "basic sampling",
    "lab.sharing.parallel": "parallel sampling, n = {n}",
    "lab.sharing.beam": "beam search, width {n}",
    "lab.sharing.prefix": "shared prefix of {tokens} tokens",
    "lab.sharing.prefix_named": "shared prefix of {tokens} tokens ({name})",
    "lab.scenario.basic": "BASIC",
    "lab.scenario.parallel": "{n} SAMPLES",
    "lab.scenario.beam": "BEAM {n}",
    "lab.scenario.prefix": "PREFIX",
    "lab.engine.max": "Orca (Max)",
    "lab.engine.pow2": "Orca (Pow2)",
    "lab.engine.oracle": "Orca (Oracle)",
    "lab.engine.paged": "vLLM (paged)",
    "lab.baseline.max": "MAX",
    "lab.baseline.pow2": "POW2",
    "lab.baseline.oracle": "ORACLE",
    "lab.baseline.paged": "PAGED",
    "lab.vs_paged": "{baseline} vs {reference}",
    "lab.pause": "PAUSE",
    "lab.run": "RUN",
    "lab.new": "NEW",
    "lab.new_trace": "NEW TRACE",
    "lab.back": "BACK",
    "lab.kind.contiguous": "a range per sequence",
    "lab.kind.paged": "blocks of {n} tokens",
    "lab.running": "running {n}",
    "lab.running_fan": "running {n} x{seqs}",
    "lab.waiting": "waiting {n}",
    "lab.waste": "waste {percent}",
    "lab.tokens_per_s": "{value} tokens/s",
    "lab.sharing_saves": "sharing saves {percent}, copied {n}",
    "lab.preempted": "preempted {n}",
    "lab.finished": "finished {n}",
    "lab.clock": "t = {t} s  {status}",
    "lab.paused": "PAUSED",
    "lab.starting": "starting the engines",
    "lab.drawing": "drawing {n} requests ... {percent}",
    "lab.plot_title": "RUNNING REQUESTS",
    "lab.plot_window": "last {s} s",
    "lab.plot_avg": "{label}  avg {value}",
    "lab.how_to_read": "HOW TO READ IT",
    "lab.help.basic": ("Same requests, same memory. Contiguous engines reserve a range per request up front; the "
                       "paged engine takes one block at a time from anywhere. Click a block to follow its request, "
                       "or this panel for each engine in the game."),
    "lab.help.parallel": ("{n} samples of each prompt. Orca gives every sample its own copy of the prompt; vLLM "
                          "points all {n} at the prompt's blocks (white pips count the pointers) and copies a shared "
                          "block only when a sample writes into it (it flashes). Click a block to see who points at it."),
    "lab.help.beam": ("Beam search, width {n}: beams fork and die every few steps. Survivors share their ancestors' "
                      "blocks (white pips count the pointers), a dropped beam frees what only it held, and a write "
                      "into a shared block copies it first (it flashes). Click a block to see its beams."),
    "lab.help.prefix": ("Every prompt starts with the same {tokens}-token instruction. vLLM computes and keeps its "
                        "blocks once (violet, top left) and every request points at them; Orca stores and computes "
                        "it again for each request."),
    "lab.help_short.basic": ("Same requests, same memory. Orca reserves a range per request up front; vLLM takes one "
                             "block at a time. Tap a block to follow its request, this panel for the game."),
    "lab.help_short.parallel": ("{n} samples a prompt: vLLM points them all at the prompt's blocks (white pips count "
                                "pointers) and copies a block when a sample writes into it."),
    "lab.help_short.beam": ("Beam width {n}: beams share their ancestors' blocks (white pips count pointers); a write "
                            "into a shared block copies it first (it flashes)."),
    "lab.help_short.prefix": ("Every prompt starts with the same {tokens} tokens: vLLM keeps their blocks once (violet) "
                              "for every request; Orca stores them again for each."),
    "lab.game_title": "IN THE GAME: {mode}",
    "lab.game.like": ("{engine}: same rules, a better guess at each length; the game reserves the maximum, "
                      "like {exact}."),
    "lab.game.contiguous": ("{mode} mode is {engine}: a request holds one range for its maximum length (its "
                            "tetromino, {blocks} blocks) until it finishes on its own, then frees it all; what is "
                            "still hatched then was wasted. No rows clear, nothing moves. No room for a request is "
                            "a CUDA OOM and ends the run; here it waits."),
    "lab.game.paged": ("{mode} mode is {engine}: a request gets blocks as its prompt is prefilled, then one more "
                       "whenever its last fills, anywhere free, and frees them all when it finishes. With no block "
                       "free the newest request is preempted, there and here: there it is recomputed, or swapped "
                       "(vLLM V0) to a {cpu}-block CPU strip; here it is recomputed. Overload ends a run there: "
                       "more than {queue} waiting, or one waiting {deadline} s for its first token."),
    "lab.game_short.contiguous": ("{mode} is {engine}: a request holds its tetromino's {blocks} blocks until it "
                                  "finishes on its own; the hatched rest is waste. No rows clear. No room is a CUDA "
                                  "OOM there; here it waits."),
    "lab.game_short.paged": ("{mode} is {engine}: blocks as it decodes, anywhere free, all freed when it finishes. "
                             "Out of blocks, the newest is preempted (recomputed, or swapped as in V0, there; "
                             "recomputed here); over {queue} waiting or {deadline} s to a first token ends a run."),
    "lab.keys_short": "{scenario} sharing  {dataset} data  {contiguous} baseline  {pause} pause",
    "lab.request": "REQUEST #{id}",
    "lab.prompt_output": "prompt {prompt}, output {output} tokens",
    "lab.slots": "{label}: slots {ranges}{more}, {used} of {reserve} used",
    "lab.where": "{label}: {where}",
    "lab.table_summary": "{label} block table: {tokens} tokens in {blocks} blocks",
    "lab.block_prefix": "BLOCK {cell}: CACHED PREFIX, {refs} REFERENCES",
    "lab.block_refs": "BLOCK {cell}: {refs} REFERENCES",
    "lab.block_ref_one": "BLOCK {cell}: {refs} REFERENCE",
    "lab.pointed.beam": "pointed at by {n} beams of request #{id}",
    "lab.pointed.parallel": "pointed at by {n} samples of request #{id}",
    "lab.pointed.other": "pointed at by {n} sequences of request #{id}",
    "lab.held_alone": "held by request #{id} alone",
    "lab.pointed_requests": "pointed at by {n} requests: {ids}",
    "lab.shared_copy": "shared: a write into it copies it first",
    "lab.table_of": "block table of #{id}: {tokens} tokens",
    "lab.table_more": "... (logical block > physical block)",
    "lab.state.running": "running",
    "lab.state.finished": "finished",
    "lab.state.preempted": "preempted, waiting to be recomputed",
    "lab.state.waiting": "waiting in the queue",
    "lab.state.future": "not arrived yet",
    "lab.legend.tokens": "tokens",
    "lab.legend.reserved": "reserved",
    "lab.legend.free": "free",
    "lab.legend.shared": "shared x{n}",
    "lab.keys": "{scenario} sharing, {dataset} data, {contiguous} baseline, {game} game, {pause} pause",
}
