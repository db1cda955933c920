/*
 * DXENG.COM - a small DOS-era DamExchange engine, written for dxserial's tests and demo.
 *
 * It does what a DOS draughts program of the 1990s did on a null-modem cable: it programs
 * the 8250 UART itself (divisor, 8N1, DTR/RTS), polls the line status register, times out
 * on the BIOS tick counter at 0040:006C (18.2 ticks a second) and speaks DXP with the
 * NULMODEM echo handshake: S, each character echoed, E; a wrong echo or 5 s of silence
 * sends the whole message again from S.  The receiver echoes every byte, starts over at
 * each S and drops a message longer than 127 characters.
 *
 * It plays legal international draughts (its own move generator: flying kings, captures
 * forward and backward by men, the majority-capture rule, promotion only at the end of a
 * move) and always plays the first legal move in its fixed generation order: it is a
 * test partner, not a player.  Both roles; BACKREQ is answered K1 (not supported); a CHAT
 * is logged; a GAMEEND is answered as the protocol says.
 *
 * Command line (decimal numbers; every key optional):
 *   DXENG port=1 baud=9600 s=2 e=3 role=f moves=0 colour=z games=1 idle=60 once=0 log=DXENG.LOG
 * port 1 or 2 (COM1 at 3F8h, COM2 at 2F8h); s/e the NULMODEM start and end bytes; role f
 * (follower: waits for GAMEREQ) or i (initiator: sends GAMEREQ with the moves limit and,
 * as the follower's colour, `colour`, swapped game by game; z: we play White first);
 * idle: seconds without a message before it gives up (0: never); once=1: the session ends
 * at the first GAMEEND it gets, answered or not, in a game or not (a DOS program that plays
 * one game per run: one that speaks first to it with a GAMEEND never gets its game played).
 * Every step goes to the log file, one line each, prefixed with BIOS ticks since start.
 *
 * Build: build.sh (bcc -Md, K&R C; port I/O and the tick counter are inline as86 below).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXMSG 127
#define MAXM 128
#define MAXC 20
#define TIMEOUT_TICKS 91 /* 5 s at 18.2 Hz */
#define MAX_ATTEMPTS 20

/* ------------------------------------------------------------------ hardware */

#ifdef __BCC__
int inb(port) int port;
{
#asm
  push bp
  mov bp,sp
  mov dx,[bp+4]
  in al,dx
  xor ah,ah
  pop bp
#endasm
}

void outb(port, val) int port; int val;
{
#asm
  push bp
  mov bp,sp
  mov dx,[bp+4]
  mov ax,[bp+6]
  out dx,al
  pop bp
#endasm
}

/* Low word of the BIOS tick counter (0040:006C), incremented 18.2 times a second. */
unsigned biosticks()
{
#asm
  push es
  mov ax,#$40
  mov es,ax
  seg es
  mov ax,[$6C]
  pop es
#endasm
}
#else
/* A host C compiler (dos/hostcheck.c, the move generator's test) has no 8250: stubs. */
int inb(port) int port; { return port ? 0 : 0; }
void outb(port, val) int port; int val; { }
unsigned biosticks() { return 0; }
#endif

unsigned lastraw;
unsigned elapsed; /* ticks since start (wraps after an hour; only differences are used) */

unsigned now()
{
  unsigned t, d;
  t = biosticks();
  d = t - lastraw;
  if (d > 100) d = 1; /* the midnight reset: count it as one tick */
  elapsed += d;
  lastraw = t;
  return elapsed;
}

int base = 0x3F8;
#define RBR (base)
#define THR (base)
#define IER (base + 1)
#define FCR (base + 2)
#define LCR (base + 3)
#define MCR (base + 4)
#define LSR (base + 5)
#define MSR (base + 6)  /* modem status: CTS 10h, DSR 20h, RI 40h, DCD 80h */

void uart_init(divisor) unsigned divisor;
{
  outb(IER, 0);            /* polled: no interrupts */
  outb(LCR, 0x80);         /* DLAB on: divisor latch */
  outb(base, divisor & 0xFF);
  outb(base + 1, divisor >> 8);
  outb(LCR, 0x03);         /* 8 data bits, no parity, 1 stop bit, DLAB off */
  outb(FCR, 0);            /* an 8250 has no FIFO; keep a 16550 like one */
  outb(MCR, 0x03);         /* DTR and RTS on */
  while (inb(LSR) & 1) inb(RBR); /* drop whatever was waiting */
}

void uart_put(c) int c;
{
  while (!(inb(LSR) & 0x20)) ;  /* transmit holding register empty */
  outb(THR, c);
}

/* Next received byte, or -1 when none arrived within `ticks` (0: wait for ever). */
int uart_get(ticks) unsigned ticks;
{
  unsigned t0;
  t0 = now();
  for (;;) {
    if (inb(LSR) & 1) return inb(RBR) & 0xFF;
    if (ticks && (unsigned)(now() - t0) >= ticks) return -1;
  }
}

/* ------------------------------------------------------------------ log */

FILE *logf;

void logs(what, text) char *what; char *text;
{
  if (!logf) return;
  fprintf(logf, "%05u %s %s\n", now(), what, text);
  fflush(logf);
}

/* ------------------------------------------------------------------ NULMODEM */

int S = 2, E = 3;
unsigned idle_ticks = 1092; /* 60 s */
char rx[MAXMSG + 1];

/* Send one byte and wait for its echo: 1 if it came back unchanged. */
int xfer(c, why) int c; char *why;
{
  int got;
  uart_put(c);
  got = uart_get(TIMEOUT_TICKS);
  if (got == c) return 1;
  if (got < 0) sprintf(why, "no echo of %d within 5 s", c);
  else sprintf(why, "echo %d for %d", got, c);
  return 0;
}

int send_msg(text) char *text;
{
  int attempt, i;
  char why[40];
  for (attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    if (xfer(S, why)) {
      for (i = 0; text[i]; i++)
        if (!xfer(text[i] & 0xFF, why)) break;
      if (!text[i] && xfer(E, why)) {
        logs("SEND", text);
        return 1;
      }
    }
    logs("RETRY", why);
  }
  logs("GIVEUP", text);
  return 0;
}

/* Receive one message into rx; 0 when nothing came for the idle time. */
int recv_msg()
{
  int c, len, inmsg;
  char note[32];
  len = 0;
  inmsg = 0;
  for (;;) {
    c = uart_get(idle_ticks);
    if (c < 0) return 0;
    uart_put(c);  /* the receiver echoes every byte, unchanged */
    if (c == S) {
      if (inmsg && len) logs("RESTART", "S inside a message");
      inmsg = 1;
      len = 0;
    } else if (!inmsg) {
      sprintf(note, "byte %d outside a message", c);
      logs("NOISE", note);
    } else if (c == E) {
      rx[len] = 0;
      logs("RECV", rx);
      return 1;
    } else if (len >= MAXMSG) {
      logs("OVERFLOW", "more than 127 characters: dropped");
      inmsg = 0;
    } else {
      rx[len++] = c;
    }
  }
}

/* After the last message: echo whatever still comes (a lost echo makes the peer repeat)
   until the line has been quiet for a second, then let the last echo leave the UART. */
void linger()
{
  int c;
  while ((c = uart_get(18)) >= 0) uart_put(c);
  while (!(inb(LSR) & 0x40)) ;
}

/* ------------------------------------------------------------------ board */

/* bd[1..50]: 'e' empty, 'w' white man, 'W' white king, 'z' black man, 'Z' black king */
char bd[51];
char nb[51][4];   /* neighbour in direction 0 up-left, 1 up-right, 2 down-left, 3 down-right */
int white_to_move;

void geometry()
{
  int sq, r, c, d, nr, nc;
  static int dr[4] = { -1, -1, 1, 1 };
  static int dc[4] = { -1, 1, -1, 1 };
  for (sq = 1; sq <= 50; sq++) {
    r = (sq - 1) / 5;
    c = ((sq - 1) % 5) * 2 + ((r & 1) ? 0 : 1);
    for (d = 0; d < 4; d++) {
      nr = r + dr[d];
      nc = c + dc[d];
      nb[sq][d] = (nr < 0 || nr > 9 || nc < 0 || nc > 9) ? 0 : nr * 5 + nc / 2 + 1;
    }
  }
}

void start_position()
{
  int sq;
  for (sq = 1; sq <= 50; sq++) bd[sq] = sq <= 20 ? 'z' : sq <= 30 ? 'e' : 'w';
  white_to_move = 1;
}

int own(p) int p;
{
  return white_to_move ? (p == 'w' || p == 'W') : (p == 'z' || p == 'Z');
}

int enemy(p) int p;
{
  return white_to_move ? (p == 'z' || p == 'Z') : (p == 'w' || p == 'W');
}

struct mv {
  char from, to, n;
  char cap[MAXC];
};
struct mv ml[MAXM];
int nml, maxcap;
char path[MAXC];
char taken[51];

void add_move(from, to, n) int from; int to; int n;
{
  int i;
  if (n > maxcap) {
    maxcap = n;
    nml = 0;
  }
  if (n < maxcap || nml >= MAXM) return;
  ml[nml].from = from;
  ml[nml].to = to;
  ml[nml].n = n;
  for (i = 0; i < n; i++) ml[nml].cap[i] = path[i];
  nml++;
}

/* Continue a capture from `at`; captured pieces stay on the board (marked) until the end. */
void captures(from, at, king, n) int from; int at; int king; int n;
{
  int d, s, t, found;
  found = 0;
  for (d = 0; d < 4; d++) {
    s = nb[at][d];
    if (king) while (s && bd[s] == 'e') s = nb[s][d];
    if (!s || !enemy(bd[s]) || taken[s]) continue;
    t = nb[s][d];
    while (t && bd[t] == 'e' && n < MAXC) {
      found = 1;
      taken[s] = 1;
      path[n] = s;
      captures(from, t, king, n + 1);
      taken[s] = 0;
      if (!king) break;
      t = nb[t][d];
    }
  }
  if (!found && n > 0) add_move(from, at, n);
}

void generate()
{
  int sq, d, t, p, king;
  nml = 0;
  maxcap = 0;
  for (sq = 1; sq <= 50; sq++) {
    p = bd[sq];
    if (!own(p)) continue;
    bd[sq] = 'e';  /* the moving piece leaves its square: it may pass it again */
    captures(sq, sq, p == 'W' || p == 'Z', 0);
    bd[sq] = p;
  }
  if (maxcap) return;
  for (sq = 1; sq <= 50; sq++) {
    p = bd[sq];
    if (!own(p)) continue;
    king = p == 'W' || p == 'Z';
    for (d = 0; d < 4; d++) {
      if (!king && (p == 'w' ? d > 1 : d < 2)) continue; /* men move forward only */
      t = nb[sq][d];
      while (t && bd[t] == 'e') {
        add_move(sq, t, 0);
        if (!king) break;
        t = nb[t][d];
      }
    }
  }
}

void play(m) struct mv *m;
{
  int i, p;
  p = bd[m->from];
  bd[m->from] = 'e';
  for (i = 0; i < m->n; i++) bd[m->cap[i]] = 'e';
  if (p == 'w' && m->to <= 5) p = 'W';
  if (p == 'z' && m->to >= 46) p = 'Z';
  bd[m->to] = p;
  white_to_move = !white_to_move;
}

/* ------------------------------------------------------------------ DXP */

char name[33] = "DXENG DOS test engine           ";
int role_initiator, games = 1, game_no, moves_limit, once;
int my_white, playing, plies, closing;
unsigned turn_start;
char out[MAXMSG + 1];
char note[80];

int num(s, n) char *s; int n;
{
  int v;
  v = 0;
  while (n--) {
    if (*s < '0' || *s > '9') return -1;
    v = v * 10 + *s++ - '0';
  }
  return v;
}

int last_game()
{
  return game_no >= games;
}

/* The start of a game: from a GAMEREQ (follower) or our own (initiator). */
void begin(msg) char *msg;
{
  int sq;
  moves_limit = num(msg + 39, 3);
  if (msg[42] == 'B') {
    for (sq = 1; sq <= 50; sq++) bd[sq] = msg[43 + sq];
    white_to_move = msg[43] == 'W';
  } else {
    start_position();
  }
  my_white = role_initiator ? msg[35] == 'Z' : msg[35] == 'W';
  playing = 1;
  plies = 0;
  closing = 0;
  turn_start = now();
  sprintf(note, "game %d: we play %s, %d moves; MSR %02x", game_no,
          my_white ? "White" : "Black", moves_limit, inb(MSR) & 0xF0);
  logs("GAME", note);
}

char req[MAXMSG + 1];
int follower_colour = 'Z';

void send_request()
{
  game_no++;
  sprintf(req, "R01%s%c000%03dA", name, follower_colour, moves_limit);
  follower_colour = follower_colour == 'Z' ? 'W' : 'Z';  /* colours swap game by game */
  send_msg(req);
}

/* Our GAMEEND, with a reason; its answer closes the game. */
void end_game(reason) int reason;
{
  sprintf(out, "E%d%d", reason, role_initiator && last_game() ? 1 : 0);
  send_msg(out);
  closing = out[2] - '0' + 1;  /* remember our stop code, +1 */
}

void my_turn()
{
  int i, secs;
  struct mv *m;
  if (moves_limit > 0 && plies >= 2 * moves_limit) {
    logs("LIMIT", "move limit reached: draw");
    end_game(2);
    return;
  }
  generate();
  if (!nml) {
    logs("LOST", "no legal move: resign");
    end_game(1);
    return;
  }
  m = &ml[0];
  secs = (int)((now() - turn_start) / 18);
  sprintf(out, "M%04d%02d%02d%02d", secs, m->from, m->to, m->n);
  for (i = 0; i < m->n; i++) sprintf(out + 11 + 2 * i, "%02d", m->cap[i]);
  sprintf(note, "%d%c%d of %d legal", m->from, m->n ? 'x' : '-', m->to, nml);
  logs("PLAY", note);
  play(m);
  plies++;
  send_msg(out);
}

/* Their MOVE: find it among the legal moves by (from, to, captured set). */
void their_move(msg) char *msg;
{
  int from, to, n, i, j, k, ok;
  from = num(msg + 5, 2);
  to = num(msg + 7, 2);
  n = num(msg + 9, 2);
  generate();
  for (i = 0; i < nml; i++) {
    if (ml[i].from != from || ml[i].to != to || ml[i].n != n) continue;
    ok = 1;
    for (j = 0; j < n && ok; j++) {
      ok = 0;
      for (k = 0; k < n; k++)
        if (num(msg + 11 + 2 * k, 2) == ml[i].cap[j]) ok = 1;
    }
    if (ok) {
      play(&ml[i]);
      plies++;
      turn_start = now();
      return;
    }
  }
  logs("ILLEGAL", msg);
  send_msg("CDXENG: that move is not legal here; ending the game");
  end_game(0);
}

/* A GAMEEND exchange is complete: 1 if we stop now. */
int closed(ours, theirs) int ours; int theirs;
{
  playing = 0;
  closing = 0;
  sprintf(note, "game %d over (stop codes: ours %d, theirs %d)", game_no, ours, theirs);
  logs("OVER", note);
  if (ours || theirs) return 1;
  if (role_initiator) send_request();
  return 0;
}

/* Handle one received message; 1 when the dialogue is over. */
int handle(msg) char *msg;
{
  int stop;
  switch (msg[0]) {
  case 'R':
    if (role_initiator) break;
    game_no++;
    if (msg[1] != '0' || msg[2] != '1') {
      sprintf(out, "A%s1", name);
      send_msg(out);
      return 0;
    }
    sprintf(out, "A%s0", name);
    send_msg(out);
    begin(msg);
    return 0;
  case 'A':
    if (!role_initiator) break;
    if (msg[33] == '0') {
      begin(req);  /* our own GAMEREQ */
      return 0;
    }
    logs("REFUSED", msg);
    if (msg[33] == '2' && !last_game()) {
      send_request();
      return 0;
    }
    return 1;
  case 'M':
    if (!playing || closing) break;
    their_move(msg);
    return 0;
  case 'E':
    stop = msg[2] == '1';
    if (closing && once) {
      logs("ONCE", "our GAMEEND is answered: one game a session");
      playing = closing = 0;
      return 1;
    }
    if (closing) return closed(closing - 1, stop);
    /* their GAMEEND: answer with reason 0; stop if they stop, or if we want to */
    sprintf(out, "E0%d", stop || (role_initiator && last_game()) ? 1 : 0);
    send_msg(out);
    if (once) {
      logs("ONCE", playing ? "the game is over: one game a session" :
           "a GAMEEND with no game open: the session ends");
      playing = 0;
      return 1;
    }
    return closed(out[2] - '0', stop);
  case 'C':
    logs("CHAT", msg + 1);
    return 0;
  case 'B':
    send_msg("K1");  /* take-back not supported: both go on as before */
    return 0;
  case 'K':
    return 0;
  }
  logs("IGNORED", msg);
  return 0;
}

/* ------------------------------------------------------------------ main */

int main(argc, argv) int argc; char **argv;
{
  int i, port;
  long baud;
  char *a, *logname;
  port = 1;
  baud = 9600;
  logname = "DXENG.LOG";
  for (i = 1; i < argc; i++) {
    a = argv[i];
    if (!strncmp(a, "s=", 2)) S = atoi(a + 2);
    else if (!strncmp(a, "e=", 2)) E = atoi(a + 2);
    else if (!strncmp(a, "baud=", 5)) baud = atol(a + 5);
    else if (!strncmp(a, "role=", 5)) role_initiator = (a[5] | 0x20) == 'i';
    else if (!strncmp(a, "moves=", 6)) moves_limit = atoi(a + 6);
    else if (!strncmp(a, "games=", 6)) games = atoi(a + 6);
    else if (!strncmp(a, "idle=", 5)) idle_ticks = atoi(a + 5) * 18;
    else if (!strncmp(a, "colour=", 7)) follower_colour = (a[7] | 0x20) == 'w' ? 'W' : 'Z';
    else if (!strncmp(a, "log=", 4)) logname = a + 4;
    else if (!strncmp(a, "once=", 5)) once = atoi(a + 5);
    else if (!strncmp(a, "port=", 5)) port = atoi(a + 5);
    else {
      printf("DXENG: unknown argument %s\n", a);
      return 2;
    }
  }
  logf = fopen(logname, "w");
  if (baud < 2 || baud > 115200L || port < 1 || port > 2 || S == E) {
    logs("ERROR", "bad port, baud, s or e");
    return 2;
  }
  base = port == 1 ? 0x3F8 : 0x2F8;
  lastraw = biosticks();
  uart_init((unsigned)(115200L / baud));
  geometry();
  sprintf(note, "COM%d at %x, %ld baud 8N1, S=%d E=%d, %s; MSR %02x", port, base, baud, S,
          E, role_initiator ? "initiator" : "follower", inb(MSR) & 0xF0);
  logs("START", note);
  printf("DXENG: %s\n", note);
  if (role_initiator) send_request();
  for (;;) {
    if (playing && !closing && (white_to_move ? my_white : !my_white)) my_turn();
    if (!recv_msg()) {
      logs("IDLE", "no message for the idle time: giving up");
      break;
    }
    if (handle(rx)) break;
  }
  linger();
  outb(MCR, 0);  /* DTR and RTS off: we are gone */
  logs("BYE", "done");
  if (logf) fclose(logf);
  return 0;
}
