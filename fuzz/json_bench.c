/* ns per byte of the JSON normalizer alone on a chat-sized arguments object
 * (~300 B: short keys, numbers, literals, short strings), or on the JSON
 * given as argv[1]; CPU clock, min of 5 runs of 200,000 documents.
 *   gcc -O2 -std=c11 -Icsrc fuzz/json_bench.c csrc/tp_json.c csrc/tp_buf.c -lm -o json_bench */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "tp_json.h"
static double now(void){struct timespec t; clock_gettime(CLOCK_PROCESS_CPUTIME_ID,&t); return t.tv_sec+t.tv_nsec*1e-9;}
int main(int argc,char**argv){
  const char *doc = argc>1? argv[1] :
   "{\"location\": \"San Francisco, CA\", \"unit\": \"celsius\", \"days\": 5, \"include_hourly\": true, "
   "\"filters\": {\"min_temp\": -3.5, \"max_temp\": 28, \"conditions\": [\"rain\", \"snow\", \"fog\"]}, "
   "\"limit\": 10, \"offset\": 0, \"verbose\": false, \"lang\": null, \"query\": \"weather next week\", "
   "\"ids\": [1, 2, 3, 42, 1000], \"ratio\": 0.75}";
  size_t n=strlen(doc);
  static tp_json j; tp_buf out; tp_buf_init(&out,0);
  int reps=200000; double best=1e9;
  for(int r=0;r<5;r++){
    double t0=now();
    for(int i=0;i<reps;i++){ out.len=0; tp_json_init(&j,0,512); tp_json_feed(&j,(const uint8_t*)doc,n,&out); }
    double dt=now()-t0; if(dt<best)best=dt;
  }
  printf("%zu bytes, %.2f ns/byte, %.1f ns/doc, out=%.*s\n", n, best/reps/n*1e9, best/reps*1e9, (int)(out.len>60?60:out.len), out.data);
  return 0;
}
