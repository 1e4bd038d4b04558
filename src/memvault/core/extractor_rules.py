"""The vocabulary of the built-in extractor (core/extractor.py): compiled patterns only.

Kept apart so the judging logic stays readable. Pure data; no I/O, no models.
"""

from __future__ import annotations

import re

_ONE_OFF = re.compile(
    r"\b(?:this time|for now|just today|today|tonight|tomorrow|yesterday|in this chat|"
    r"in this conversation|(?:for|in) this (?:session|thread|reply|response|answer|message)|"
    r"right now|at the moment|for the moment|just this once|this once|just once|"
    r"temporar(?:y|ily)|for the time being|for a while|for a bit|this (?:morning|afternoon|"
    r"evening|week|weekend|month)|until (?:tomorrow|tonight|monday|tuesday|wednesday|thursday|"
    r"friday|saturday|sunday|next week|i get back|the meeting)|"
    r"(?:in|for|on|of|to) (?:this|these|that) (?:file|files|function|snippet|code|script|"
    r"email|draft|doc|document|essay|paragraph|sentence|list|table|query|pr|pull request|"
    r"commit|bug|error|issue|one|page|slide|slides|report|post|section|example|case|task|"
    r"request|question|chat|conversation|thread|answer|reply|response|message|output|"
    r"summary|translation|test|diff|branch|meeting|call|trip|ticket)|"
    r"(?:this|the) (?:above|below)|(?:just|only) for (?:this|now|today|me now)|"
    r"(?:just|only) here|here\b\W*$|instead this|next (?:answer|reply|response|message)|"
    r"one-off|one off|at this point|lately|recently|"
    r"when(?:ever)? you (?:get|have) (?:a|the) (?:chance|minute|moment|sec|second)|"
    r"\b(?:this|that|these|those) (?:answer|answers|response|reply|message|version|draft|one|"
    r"output|code|snippet|example|idea|suggestion|explanation|solution|summary|chat|"
    r"conversation|thread|article|text|plan|option|recipe|list)\b)", re.I)

_QUESTION_START = re.compile(
    r"^(?:what|why|how|when(?! (?:i|you)\b)|where|which|who|whom|whose|is|are|am|was|were|"
    r"do|does|did|can|"
    r"could|would|should|shall|will|may|might|have|has|had)\b(?!n't)", re.I)

_HYPOTHETICAL = re.compile(
    r"\b(?:if (?:i|we) (?:were|was|had|could|ever|did|didn't|became|moved|switched|decided|"
    r"wanted|won|lost|started|got|went|lived|worked|changed|chose|quit|stopped|gave|"
    r"would|might|should|happen)|what if|suppose|supposing|imagine|hypothetical(?:ly)?|"
    r"in theory|let's say|lets say|say i|pretend|would i|should i|could i|might i|"
    r"i would(?! like you to (?:always|never))|i'd(?! like you to (?:always|never))|"
    r"i wonder|wondering|in a world|someday|some day|one day|i wish|i hope|hopefully|"
    r"i might|i may|maybe|perhaps|probably|not sure|unsure|i guess|i suppose|"
    r"i think i|i'm thinking|i am thinking|thinking (?:about|of)|considering|"
    r"planning to|plan to|i'm going to|i am going to|i'll|i will|would be|could be|"
    r"would have|could have|should have)\b", re.I)

_PAST_OR_CHANGE = re.compile(
    r"\b(?:i used to|i once|i previously|i formerly|back when|when i was|"
    r"i (?:forgot|broke|messed|screwed|tried|missed|lost|did|made|got|went|had|said|meant|"
    r"wrote|deleted|pushed|ran|saw|found|just)\b|"
    r"i used to be|years ago|last (?:year|month|week)|in the past|as a kid|as a child|"
    r"i never (?:said|did|was|had|went|told|got|saw|made|knew|thought|meant|asked|"
    r"tried|used|liked|wanted|heard|\w+ed)\b)", re.I)

_OTHER_PERSON_NOUNS = (
    r"wife|husband|partner|spouse|girlfriend|boyfriend|son|daughter|kid|kids|child|"
    r"children|baby|mom|mum|mother|dad|father|parents?|brother|sister|siblings?|cousin|"
    r"aunt|uncle|grandma|grandpa|grandmother|grandfather|friend|friends|boss|manager|"
    r"colleague|colleagues|coworker|coworkers|co-worker|teammate|teammates|team|client|"
    r"clients|customer|customers|neighbou?r|roommate|flatmate|landlord|teacher|professor|"
    r"advisor|supervisor|students?|doctor|dog|cat|pet|users|readers|audience|family|"
    r"lead|cto|ceo|intern|mentor|fiance|fiancee|niece|nephew")

_REPORTED = re.compile(
    r"\b(?:said|says|told me|tells me|told us|asked me|asks me|wrote|writes|tweeted|"
    r"mentioned|claims|claimed|insists|insisted|according to|reckons|thinks|believes|"
    r"argues|argued)\b", re.I)

_THIRD_PERSON_START = re.compile(
    rf"^(?:(?i:(?:my|our|his|her|their|the|a|an) (?:\w+ )?(?:{_OTHER_PERSON_NOUNS})\b|"
    r"(?:he|she|they|we|it|everyone|everybody|someone|somebody|people|nobody)\b|"
    r"you\b(?! (?:should|must|need to) (?:always|never)))|"
    r"[A-Z][a-z]+ (?:prefers|likes|loves|hates|always|never|works|lives|is|was|wants|uses|"
    r"says|said|thinks))")

# A statement about the user must contain one of these (first person or an imperative).
_FIRST_PERSON = re.compile(r"\b(?:i|i'm|i've|i am|my|me|mine)\b", re.I)

_SELF_NOUNS = (
    r"name|full name|first name|last name|nickname|handle|username|pronouns|job|job title|"
    r"title|role|position|profession|occupation|background|degree|major|field|"
    r"specialty|speciality|expertise|timezone|time zone|native language|first language|"
    r"mother tongue|language|languages|birthday|location|hometown|home town|city|country|"
    r"email|editor|ide|os|operating system|stack|tech stack|setup|shell|keyboard|laptop|"
    r"(?:main|current|side|day-to-day|primary|own|personal|pet|big|biggest|latest|"
    r"thesis|research|phd|open[- ]source)?\s?(?:project|projects|repo|repository|codebase|"
    r"product|app|startup|company|business|thesis|dissertation|book|research|research area|"
    r"focus|area|work|day job|goal|goals)|"
    r"(?:favou?rite|preferred|go-to|usual|default)\s+\w+(?:\s+\w+)?|diet|allergy|allergies|"
    r"hobby|hobbies|workflow|team name|github|website|blog|preference|preferences")

# Trigger patterns: (regex over the trimmed statement, kind).
_TRIGGERS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(p, re.I), kind) for p, kind in (
        # identity
        (r"^my name(?:'s| is)\b", "identity"),
        (r"^(?:please )?(?:call me|address me as|refer to me as)\b", "identity"),
        (r"^(?:i'm|i am) (?:called|known as|named)\b", "identity"),
        (r"^my (?:pronouns|native language|first language|mother tongue|timezone|time zone|"
         r"birthday|job title|job|role|title|profession|occupation|background|degree|"
         r"hometown|home town|location|nationality|email|handle|username|nickname|diet|"
         r"allerg(?:y|ies))(?:'s| is| are)\b", "identity"),
        (r"^(?:i live|i'm based|i am based|i reside|i'm located|i am located|i'm from|i am "
         r"from|i come from|i grew up)\b", "identity"),
        (r"^i (?:work|am working|'m working) (?:as|at|for|in)\b", "identity"),
        (r"^(?:i'm|i am) (?:a|an) (?!(?:bit|little|tad|lot|big fan|fan|idiot|dummy|moron|fool|"
         r"mess|disaster|wreck)\b)[\w-]+", "identity"),
        (r"^(?:i'm|i am) (?:vegan|vegetarian|left-handed|right-handed|colou?r-?blind|"
         r"dyslexic|deaf|blind|allergic|lactose|gluten|fluent|bilingual|trilingual|"
         r"a native|retired|self-employed|freelance|married|single|based)\b", "identity"),
        (r"^i (?:speak|have (?:\w+ )?(?:years|a degree|a phd|a masters|a master's|a "
         r"background|dyslexia|adhd|a cat|a dog))\b", "identity"),
        (r"^i(?:'ve| have) been (?:a|an|working|coding|programming|writing|teaching|"
         r"living)\b", "identity"),
        (r"^i (?:teach|study|studied|majored|hold)\b", "identity"),
        (r"^i (?:mainly |mostly |primarily |usually )?(?:work(?! on\b)|code|program|develop|"
         r"write|build things|design|draw|compose|think|learn|read)"
         r"(?: (?:everything|all|most|mostly|"
         r"mainly|primarily|only|exclusively|almost exclusively|all my \w+|most of my \w+|"
         r"my \w+))? (?:in|with|at|on|using)\b", "identity"),
        (r"^(?:i'm|i am) (?:really |very |pretty |quite |super |so |totally |kind of |"
         r"sort of |genuinely |absolutely )?(?:terrible|bad|good|great|awful|hopeless|decent|"
         r"new|experienced|fluent|proficient|comfortable|familiar|rusty|obsessed|passionate|"
         r"crazy|nuts|hooked) (?:with|at|in|to|about|on)\b(?! (?:whatever|either|that|it|this|"
         r"both|anything|everything|those|these|now)\b)", "identity"),
        (r"^i work (?:remotely|from home|nights|part[- ]time|full[- ]time|freelance|shifts)\b",
         "identity"),
        (r"^(?:i'm|i am|i run|i'm running|i am running|i develop|i work) on (?:windows|linux|"
         r"macos|mac ?os|a mac|ubuntu|debian|fedora|arch|nixos|chromeos|android|ios|wsl|"
         r"an? (?:m1|m2|m3|intel|amd|linux|windows|mac)\b)", "identity"),
        (r"^i (?:don't |do not |never )?(?:eat|drink)\b", "preference"),
        (r"^(?:i'm|i am) (?:not )?(?:a|an) (?!(?:bit|little|tad|lot|big fan|fan|idiot|dummy|"
         r"moron|fool|mess|disaster|wreck)\b)[\w-]+",
         "identity"),
        (r"^(?:i'm|i am) \d{1,3}(?: years old| years of age|\b)", "identity"),
        (r"^(?:i'm|i am) (?:in|on) (?:the )?[\w/+-]+ time ?zone\b", "identity"),
        (r"^(?:i'm|i am) the (?:one|person|author|founder|owner|maintainer|creator|lead|"
         r"only|sole|main|primary)\b", "identity"),
        (r"^(?:i'm|i am) (?:currently )?(?:between jobs|unemployed|retired|self-taught|"
         r"a student|in school|in college|in university|pregnant|colou?r ?blind|"
         r"neurodivergent|autistic|hard of hearing|visually impaired)\b", "identity"),
        (r"^i(?:'ve| have)(?: got)? (?:adhd|add|dyslexia|autism|asthma|diabetes|epilepsy|"
         r"celiac|coeliac|tinnitus|migraines|(?:\w+ )?(?:kids|children)|a (?:cat|dog|partner|"
         r"wife|husband|son|daughter|kid|child|baby|toddler|newborn))\b", "identity"),
        (r"^i (?:mainly |mostly |usually |currently )?work\b(?! on\b)", "identity"),
        (r"^i (?:drive|own|ride|cook|bake|play|practi[cs]e|commute|cycle|swim|meditate|"
         r"garden|knit|paint|sing|collect|volunteer|rent|follow|homeschool|freelance|blog|"
         r"podcast|invest|trade|fast|run marathons|lift|climb|surf|ski|hike)\b", "preference"),
        # projects
        (r"^i (?:mainly |mostly |primarily |usually )?(?:work on|develop|maintain|build|run|"
         r"manage|lead|own|contribute to)\b", "project"),
        (r"^(?:i'm|i am) (?:currently |mainly |mostly )?(?:working on|building|developing|"
         r"maintaining|writing|the maintainer|the author|the founder|a maintainer|"
         r"a contributor|leading|researching|learning|studying)\b", "project"),
        (rf"^my (?:{_SELF_NOUNS})(?: (?:on|at|for|in) [\w.-]+)?(?:'s| is| are| was built| uses|"
         r" runs| lives| targets)\b",
         "project"),
        # preferences
        (r"^i (?:really |strongly |generally |usually |mostly |much |definitely |"
         r"always |just )?(?:prefer|like|love|enjoy|hate|dislike|detest|loathe|"
         r"appreciate|favou?r|value|can't stand|cannot stand|can't bear|don't like|"
         r"do not like|don't want|do not want|don't enjoy|don't care for|don't need|"
         r"do not need|avoid|use|work best|learn best|read best|think best)\b", "preference"),
        (r"^(?:i'm|i am) (?:really |very |pretty |quite |super |so |totally |kind of |"
         r"sort of |genuinely |absolutely )?"
         r"(?:a (?:big |huge )?fan of|not a fan of|into|partial to|"
         r"comfortable with|more comfortable|most comfortable|used to working|"
         r"allergic to|picky about|particular about)\b", "preference"),
        (r"^i (?:usually|typically|normally|always|never|mostly|tend to|generally|rarely|"
         r"often|only)\b(?! (?:forget|struggle|mess|get|end up|break|lose|run into|mix up|"
         r"confuse|wonder|have trouble|have problems|seem|fail|miss|screw)\b)", "preference"),
        (r"^(?:my (?:favou?rite|preferred|go-to|usual|default)\b)", "preference"),
        # standing instructions
        (r"^(?:from now on|going forward|moving forward|in (?:the )?future|in all future|"
         r"for all future|for future|henceforth|from here on(?: out)?|by default|as a rule|"
         r"in general|generally|whenever|every time|each time|any time|anytime)\b",
         "instruction"),
        (r"^(?:please )?(?:always|never(?! mind)|don't ever|do not ever|never ever)\b"
         r"(?! (?:the|a|an|same|so|such|that|this|been|is|was|were|had|has|heard|seen|done|"
         r"again|ever|enough|fun|easy|true|gets|works|happens|\w+ed)\b)", "instruction"),
        (r"^(?:please )?(?:remember|keep in mind|note|bear in mind|don't forget) that\b",
         "instruction"),
        (r"^(?:i (?:always )?want you to|i'd like you to|i would like you to) "
         r"(?:always|never)\b", "instruction"),
        (r"^(?:you should|you must|you need to) (?:always|never)\b", "instruction"),
        (r"^(?:when|whenever|if) (?:i|you) (?:ask|send|share|paste|request|write|give|mention|"
         r"say|upload|show|answer|reply|respond|explain|summari[sz]e|suggest|recommend|"
         r"review|translate|draft|code)\b.*\b(?:always|never|please|make sure|use|"
         r"include|avoid|don't|do not)\b", "instruction"),
    ))

# Fillers cut from the front of a statement (trimming only).
_LEADING_FILLER = re.compile(
    r"^(?:(?:oh|ah|ok|okay|so|well|also|and|but|plus|btw|by the way|fyi|hey|hi|hello|"
    r"anyway|anyways|actually|honestly|basically|just so you know|just fyi|for the record|"
    r"for context|for your information|as (?:i|you) (?:said|know|mentioned)|one more thing|"
    r"another thing|quick note|note|side note|reminder|ps|p\.s\.|heads up|also note|"
    r"one thing|important|oh and|and also|yes|yeah|no|nope|sure|thanks|thank you|"
    r"great|cool|alright|right|please note|first|firstly|second|secondly|third|thirdly|"
    r"finally|lastly|additionally|besides|otherwise|sorry|"
    r"(?:please )?(?:remember|keep in mind|bear in mind|note)(?: that)?|please)\b"
    r"[\s,:;.!-]*)+", re.I)
_REMEMBER_THAT = re.compile(
    r"^(?:please )?(?:remember|note|keep in mind|bear in mind|don't forget|do not forget)"
    r" that\s+", re.I)

_TOPICS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("research", re.compile(
        r"\b(?:sources?|cite|citing|citation|citations|references?|papers?|studies|study|"
        r"evidence|peer[- ]reviewed|primary sources|fact[- ]check\w*|wikilinks?|links? to|"
        r"bibliograph\w*|arxiv|journals?|data sources?|research)\b", re.I)),
    ("presentation", re.compile(
        r"\b(?:tables?|bullet(?:s| points?)?|lists?|markdown|headings?|headers?|format\w*|"
        r"layout|charts?|graphs?|diagrams?|code blocks?|bold|italics?|emojis?|font|"
        r"numbered|tl;?dr|summary at the top|sections?|columns?|dark mode|visuals?|"
        r"latex|screenshots?|metric units|units|date format|iso dates?|24-hour)\b", re.I)),
    ("workflow", re.compile(
        r"\b(?:commits?|git|branch\w*|pull requests?|prs?|tests?|testing|tdd|ci|deploy\w*|"
        r"editor|vim|neovim|emacs|vs ?code|ide|terminal|shell|tabs|spaces|indent\w*|"
        r"linters?|lint\w*|type hints?|docstrings?|refactor\w*|code review|pair "
        r"programming|standups?|tickets?|jira|kanban|pomodoro|workflow|scripts?|"
        r"makefile|docker|kubernetes|pytest|cli|keyboard shortcuts?|dotfiles)\b", re.I)),
    ("communication", re.compile(
        r"\b(?:answers?|responses?|replies|reply|respond|explain\w*|explanations?|tone|"
        r"concise|brief|short|long|verbose|terse|detail\w*|jargon|formal|casual|friendly|"
        r"polite|direct|preamble|small talk|apologi\w+|summar\w+|language|english|french|"
        r"german|spanish|japanese|chinese|write|writing|wording|words|talk|speak|"
        r"questions|clarifying|feedback|honest|blunt|examples?|analogies|step[- ]by[- ]step"
        r")\b", re.I)),
)

_NAME_ONLY = re.compile(r"^(?:[Ii]'m|I am|[Tt]his is|[Ii]t's) (?!(?:Done|Back|Here|Ready|Sorry|"
                        r"Fine|Good|Ok|Okay|Lost|Confused|Tired|Busy|Stuck|Sure|Home|Out|"
                        r"In|On|Off|Not|So|Very|Just|Still|Also)\b)[A-Z][\w'-]+(?: [A-Z][\w'-]+)?"
                        r"(?: again| here)?$")

_ANYWHERE_MARKER = re.compile(
    r"(?<!as )(?<!like )(?<!you )(?<!it )(?<!they )(?<!he )(?<!she )(?<!we )"
    r"\b(?:always|from now on|from here on(?: out)?|going forward|"
    r"moving forward|in (?:the )?future|every time|whenever|by default|in everything|"
    r"in all (?:your|my|future)|for (?:all|every) (?:my|your|future)|for everything|"
    r"in every (?:answer|reply|response|message|chat|conversation))\b", re.I)
_IMPERATIVE_START = re.compile(
    r"^(?:please )?(?:use|write|answer|reply|respond|give|keep|add|put|show|format|include|"
    r"avoid|cite|explain|call|address|assume|prefer|stop|start|skip|make|list|sort|spell|"
    r"label|mention|ask|remind|check|double-check|quote|link|summari[sz]e|translate|speak|"
    r"talk|treat|default|convert|express|round|measure|be|do not|don't|leave|end|begin|"
    r"open|lead|mark|highlight|number|limit|stick|refer|tell|warn|flag|note)\b", re.I)


_DURABLE_LEAD = re.compile(
    r"^(?:from now on|from here on(?: out)?|going forward|moving forward|in (?:the )?future|"
    r"by default|in general|generally|as a rule)(?:[,:]?\s+|\W*$)", re.I)
_CONDITIONAL_LEAD = re.compile(r"^(?:whenever|every time|each time|any ?time|when|if)\b",
                               re.I)
_MAIN_CLAUSE_OK = re.compile(
    r"^(?:please|always|never|don't|do not|you (?:should|must|need to)|make sure|remember)\b",
    re.I)
