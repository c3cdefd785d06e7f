"""One Korean word per concept: the variants the Korean text must not use, and what to write instead.

The choices follow the article's Korean edition and the house terms (docs/i18n.md, "Korean terms").
Each entry is (pattern, preferred): `pattern` is a regular expression for a variant, matched in the
rendered catalogue, the Korean web pages and the docs' Korean (tests/test_i18n_terms.py).
"""
from __future__ import annotations

# The variants of the three verbs the catalogue keeps to one each (tests/test_i18n_korean.py).
HOLD_VARIANTS = r"쥐[고는었던다]|쥔|(?<![복혼])잡[아혀힌은고을는]"
GROW_VARIANTS = r"(?<!모)자[라랄란랐]|확장|늘어[나난날납]"
ADMIT_VARIANTS = r"받아들|요청[을도] (?:[가-힣]+ ){0,2}받(?!는)"

BANNED: tuple[tuple[str, str], ...] = (
    # piece: 테트로미노 (조각 only in 조각 모음, defragment)
    (r"조각(?! 모음)", "테트로미노"),
    # row: 줄
    (r"(?<![가-힣])라인(?! 클리어)", "줄"),
    (r"(?<![가-힣])행(?![가-힣]{2})|열, ?행", "줄"),
    # free: 빈 블록 / 빈 메모리
    (r"여유", "빈 블록 / 빈 메모리"),
    # daily challenge: 오늘의 도전
    (r"일일 도전", "오늘의 도전"),
    (r"(?<!오늘의 )도전", "오늘의 도전"),
    # logical / physical block
    (r"논리 페이지", "논리 블록"),
    (r"물리 페이지", "물리 블록"),
    # pause: 일시정지
    (r"멈춤", "일시정지"),
    (r"일시 정지", "일시정지"),
    # best: 최고 점수
    (r"최고 기록", "최고 점수"),
    (r"최고(?! 점수)", "최고 점수"),
    # drops and rotations
    (r"천천히 내리|바로 떨어뜨리|(?<![가-힣])내리기", "하드 드롭 / 소프트 드롭"),
    (r"왼(쪽)? 회전|오른(쪽)? 회전", "시계 / 반시계 (방향 회전)"),
    (r"시계 반대", "반시계"),
    # maximum sequence length, as the article
    (r"(?<!시퀀스 )최대 길이", "최대 시퀀스 길이"),
    # translationese the review named
    (r"통째", "한 덩어리 / 연속 범위"),
    (r"잇는 표|이어 ?줍니다|이어집니다", "매핑합니다 (블록 테이블)"),
    (r"받지 못함", "할당할 수 없음 / 실행을 시작하지 못함"),
    (r"실제 게임 아님", "녹화된 게임"),
    (r"원격 측정", "지표"),
    (r"범위 밖", "닿을 수 없는"),
    # one word each for the rest of the glossary
    (r"막힌 빈 블록", "갇힌 빈 블록"),
    (r"(?<![가-힣])판(?![가-힣])", "게임"),
    (r"페이지 모드", "페이징 모드"),
    (r"단편화", "파편화"),
    (r"가비지 수집|쓰레기 수집", "가비지 컬렉션"),
    (r"공유코드", "공유 코드"),
    (r"최대 VRAM 사용", "최대 VRAM 점유"),
    # hold (Tetris): 홀드, as Korean players say it
    (r"보류", "홀드"),
    # one verb each (docs/i18n.md): a request holds memory (점유하다), grows (커지다), is admitted
    # (실행을 시작하다); a request reaches a free block (닿다) but decoding fills one and a goal is met
    (HOLD_VARIANTS, "점유하다"),
    (GROW_VARIANTS, "커지다"),
    (ADMIT_VARIANTS, "실행을 시작하다 (요청) / 수락하다 (드래프트)"),
    (r"디코딩이[^.]*닿|목표[^.]*닿|닿[^.]*목표", "디코딩이 채우다 / 목표를 달성하다"),
    # speculative decoding, chunked prefill, the engine
    (r"초안", "드래프트"),
    (r"청크 단위(로)? 프리필", "청크 프리필"),
    (r"서버", "서빙 엔진"),
    (r"과부하되|과부하됩", "과부하로 멈추다"),
)
