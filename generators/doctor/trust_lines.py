"""The trust gate's wording, one definition for the command line's report (examine.py) and the
browser page's trust tab (browser.py).

Each entry is a line's text in English and in Japanese, with ``{name}`` placeholders: the
command line fills them with :meth:`str.format` from what it read of the trace, the browser page
turns each into a SQL expression over the same facts. A line whose wording depends on a count
has one entry per variant (``id/variant``), or a fragment the count picks.
"""

from __future__ import annotations

#: (English, Japanese) per line id, or per ``id/variant``.
TEXTS: dict[str, tuple[str, str]] = {
    "ids-overflow": (
        "{n} ids in the file do not fit in a signed 64-bit integer (by key: {keys}): "
        "the trace processor reads such an id wrapped or cut short, so events may land "
        "on another process's or thread's track, and launches be tied to the wrong "
        "kernels or to none: any count may be wrong.",
        "ファイル中の ID のうち {n} 個が符号付き 64 ビット整数に収まりません"
        "（キー別: {keys}）。トレースプロセッサはそうした ID を桁あふれさせたり切り詰め"
        "たりして読むため、イベントがほかのプロセスやスレッドのトラックに載ったり、起動が"
        "違うカーネルに結びついたり、どれにも結びつかなかったりします。どの集計も"
        "誤っているおそれがあります。",
    ),
    "no-pid-tid": (
        "At least {n} events state no pid or no tid: the trace processor puts them on a "
        "track of its own choosing (process 0, say), beside another thread's or "
        "device's events, so where they are counted and what they nest in may be wrong.",
        "少なくとも {n} 個のイベントに pid か tid がありません。トレースプロセッサ"
        "はそれらを自分で選んだトラック（たとえばプロセス 0）に、ほかのスレッドやデバイス"
        "のイベントと並べて置くため、どこで数えられるか、何の中に入れ子になるかが誤って"
        "いるおそれがあります。",
    ),
    "pid-tid-twice": (
        "At least {n} events state their pid or tid twice: the trace processor keeps "
        "the last value, which may not be the event's own process or thread, so where "
        "they are counted and what they nest in may be wrong.",
        "少なくとも {n} 個のイベントが pid か tid を 2 度書いています。トレース"
        "プロセッサは後の値を使いますが、それがイベント自身のプロセスやスレッドとは限ら"
        "ないため、どこで数えられるか、何の中に入れ子になるかが誤っているおそれがあります。",
    ),
    "not-utf8": (
        "{n} bytes of the file are not UTF-8 text (in names, say): every name the "
        "trace processor returns is read without them, so names that differ only in "
        "those bytes read the same here.",
        "ファイル中の {n} バイトが UTF-8 のテキストではありません"
        "（名前の中など）。トレースプロセッサが返す名前はそのバイトを除いて読まれるため、"
        "そのバイトだけが違う名前はここでは同じに見えます。",
    ),
    "file-check-partial": (
        "The file could not be read to the end a second time ({error}), to "
        "check what the trace processor reads without a word (ids, names, pid and tid): "
        "those checks are partial.",
        "トレースプロセッサが黙って読み替えるもの（ID、名前、pid と tid）を"
        "確かめるためにファイルをもう一度最後まで読むことができませんでした（{error}）。"
        "その確認は部分的です。",
    ),
    # {is_are}: " is" for one id, "s are each" for more.
    "shared-correlations/ids": (
        "{n} CUPTI correlation id{is_are} on more than one launch",
        "CUPTI の相関 ID のうち {n} 個が、それぞれ 2 つ以上の起動に付いています",
    ),
    "shared-correlations/processes": (
        "{ids} (launches on {procs} processes): the file holds several processes' "
        "launches, as when the traces of several ranks are merged into one, so counts and "
        "times mix the processes, and a launch cannot be told from another with the same "
        "id: no kernel is traced back to its launch. Give the doctor each rank's own trace: "
        "it compares them across the ranks.",
        "{ids}（起動は {procs} 個のプロセス上）。ファイルには複数のプロセスの起動があり"
        "（複数のランクのトレースを 1 つにまとめたときのように）、集計も時間もプロセスが混ざ"
        "っています。同じ ID の起動を見分けられないため、どのカーネルもその起動までたどれ"
        "ません。ランクごとのトレースを doctor に渡してください。ランクをまたいで比べます。",
    ),
    "shared-correlations/one-process": (
        "{ids}: a launch cannot be told from another with the same id, so no kernel is "
        "traced back to its launch.",
        "{ids}。同じ ID の起動を見分けられないため、どのカーネルもその起動までたどれません。",
    ),
    "accelerator-not-read": (
        "The trace holds {mtia} MTIA accelerator events, which the "
        "doctor's checks do not read (they read CUDA and ROCm kernels, copies and "
        "launches): nothing about the accelerator's side is checked, and a quiet report "
        "says nothing about it.",
        "トレースには MTIA アクセラレータのイベントが {mtia} 個"
        "ありますが、doctor のチェックはこれを読みません"
        "（読むのは CUDA と ROCm のカーネル、"
        "コピー、起動です）。アクセラレータ側は何もチェックされず、所見がなくても何の保証"
        "にもなりません。",
    ),
    "no-gpu": (
        "The trace holds no GPU activity (a CPU-only capture, or a profiler run without "
        "ProfilerActivity.CUDA): nothing about the GPU can be checked.",
        "トレースに GPU のアクティビティがありません（CPU だけのキャプチャ"
        "か、ProfilerActivity.CUDA なしで実行したプロファイラ）。GPU については何"
        "もチェックできません。",
    ),
    "no-flows": (
        "The trace has GPU activity but no ac2g flow events tying launches to kernels, "
        "so no kernel can be traced back to the CPU call that launched it; the GPU's idle "
        "time is still measured, without its causes.",
        "トレースには GPU のアクティビティがありますが、起動とカーネルを結びつけ"
        "る ac2g のフローイベントがないため、どのカーネルもそれを起動した CPU の"
        "呼び出しまでたどれません。GPU のアイドル時間は測れますが、"
        "その原因はわかりません。",
    ),
    "no-shapes": (
        "No operator records its input shapes (captured with record_shapes=False): "
        "lessons that need a tensor's size cannot be checked (attention-materialised "
        "still finds SDPA's math backend by name, not hand-written attention).",
        "どの演算子も入力形状を記録していません（record_shapes=False でキャプチ"
        "ャ）。テンソルのサイズが必要なレッスンはチェックできません"
        "（attention-materialised は SDPA の math バックエンドを名前で見つけます"
        "が、手書きのアテンションは見つけません）。",
    ),
    "no-steps": (
        "The trace has no ProfilerStep#N annotations on a CPU thread (no profiler "
        "schedule, or prof.step() never called): the whole trace is treated as one "
        "step, one-time work (start-up, weight uploads, warm-up) included, so findings "
        "about the step loop are shown as information, and per-step checks cannot run.",
        "トレースの CPU スレッドに ProfilerStep#N のアノテーションがありません（プロファイ"
        "ラのスケジュールがない、または prof.step() が呼ばれていない）。トレース全体を 1 つ"
        "のステップとして扱うため、一度きりの仕事（立ち上げ、重みのアップロード、ウォームアップ）"
        "も含まれます。そこでステップのループについての所見は情報として示し、ステップごとの"
        "チェックは実行できません。",
    ),
    "with-stack": (
        "Captured with with_stack=True ({python} python_function "
        "events): recording the Python stack slows every operator and launch on the CPU, "
        "so CPU-side durations read longer than the code runs without it (the GPU's own "
        "durations are not affected).",
        "with_stack=True でキャプチャされています（python_function イベント "
        "{python} 個）。Python のスタックの記録が"
        " CPU 側のすべての演算子"
        "と起動を遅くするため、CPU 側の時間は、それなしで動かしたときより長く見えます"
        "（GPU 側の時間は影響を受けません）。",
    ),
    "graph-capture": (
        "The trace records CUDA/HIP graph capture ({capture} "
        "BeginCapture/EndCapture/GraphInstantiate calls): kernels launched while a "
        "stream captures are recorded, not run, so launches inside a capture are not "
        "execution",
        "トレースには CUDA/HIP グラフのキャプチャが記録されています"
        "（BeginCapture/EndCapture/GraphInstantiate の呼び出し"
        " {capture} 回）。"
        "キャプチャ中のストリームに起動したカーネルは記録されるだけで実行されないため、"
        "キャプチャ内の起動は実行ではありません",
    ),
    "graph-capture/replays": (
        "; the trace also replays graphs ({replays} graph launches).",
        "。トレースはグラフの再生も含みます（グラフの起動 {replays} 回）。",
    ),
    "graph-capture/no-replays": (
        ", and no graph launch replays them here: checks of how work ran do not run.",
        "。ここではグラフの起動による再生もないため、実行のされ方を見るチェックは実行しません。",
    ),
    "importer": (
        "The trace processor reported {value} × {name} while importing: the trace may "
        "be incomplete.",
        "トレースプロセッサがインポート中に {name} を {value} 回報告しました。ト"
        "レースが不完全なおそれがあります。",
    ),
    "no-device": (
        "GPU model unknown: the trace has {kernels} kernels but the GPU's name is missing "
        "(Kineto's deviceProperties block is absent, or lists its GPUs with empty names): "
        "checks that depend on the GPU model cannot run.",
        "GPU のモデルは不明です。トレースにはカーネルが {kernels} 個あり"
        "ますが、GPU の名前がありません（Kineto の deviceProperties ブロックがないか、"
        "GPU の名前が空です）。GPU のモデル"
        "に依存するチェックは実行できません。",
    ),
    "unknown-gpu": (
        "The guide has no datasheet peaks for {gpu}: the rates its "
        "lessons set against a GPU's peak (TFLOP/s, bytes/s) have nothing to be set "
        "against here. The doctor's checks do not need them.",
        "このガイドには {gpu} のデータシート上のピーク性能がありま"
        "せん。レッスンが GPU のピークと比べるレート（TFLOP/s、bytes/s）は、ここでは比べる"
        "相手がありません。doctor のチェックはピークを使いません。",
    ),
    "one-rank": (
        "The trace is one rank of {ranks} (distributedInfo): a communication kernel's time "
        "includes waiting for the other ranks to arrive, so exposed communication time may be "
        "other ranks' lateness, which this trace cannot show.",
        "このトレースは {ranks} ランクのうちの 1 つです（distributedInfo）。通信カーネルの"
        "時間にはほかのランクの到着を待つ時間も含まれるため、計算と重なっていない通信の時間は"
        "ほかのランクの遅れかもしれません。それはこのトレースからはわかりません。",
    ),
}


def text(key: str, lang: str = "en", **values: object) -> str:
    """The line ``key`` in ``lang`` with its placeholders filled."""
    en, ja = TEXTS[key]
    return (ja if lang == "ja" else en).format(**values)


def both(key: str, **values: object) -> tuple[str, str]:
    """The line ``key`` in English and in Japanese, its placeholders filled."""
    return text(key, "en", **values), text(key, "ja", **values)


def overflow_keys(by_key: dict[str, int]) -> str:
    """The ids-overflow line's "by key" list: each key with its count, most first (ties in the
    order the file first holds them)."""
    ranked = sorted(by_key.items(), key=lambda kv: -kv[1])
    return ", ".join(f"{k}: {v}" for k, v in ranked)
