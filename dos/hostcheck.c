/*
 * The DOS engine's move generator, built for the host (cc dos/hostcheck.c) so a test can
 * compare it with dxserial's own on many positions.  Reads lines "W<50 squares>" or
 * "Z<50 squares>" (side to move, then the DXP position); prints one line per position:
 * the legal moves as from-to:captured,... separated by blanks ("-" when there are none).
 */
#define main dxeng_main
#include "dxeng.c"
#undef main

int main()
{
  char line[64];
  int i, j, sq;
  geometry();
  while (fgets(line, sizeof line, stdin)) {
    if (strlen(line) < 51) continue;
    white_to_move = line[0] == 'W';
    for (sq = 1; sq <= 50; sq++) bd[sq] = line[sq];
    generate();
    if (!nml) printf("-");
    for (i = 0; i < nml; i++) {
      printf("%s%d-%d:", i ? " " : "", ml[i].from, ml[i].to);
      for (j = 0; j < ml[i].n; j++) printf("%s%d", j ? "," : "", ml[i].cap[j]);
    }
    printf("\n");
  }
  return 0;
}
