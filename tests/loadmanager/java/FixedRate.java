import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/** Plain JDK: whether scheduleAtFixedRate accepts a period of the given minutes (in ms, as a
 *  long from an int). Input lines: id TAB minutes; output: id TAB scheduled|refused. */
public class FixedRate {
    public static void main(String[] args) throws Exception {
        ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(1);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isEmpty()) {
                continue;
            }
            String[] parts = line.split("\t");
            int minutes = Integer.parseInt(parts[1]);
            long period = TimeUnit.MINUTES.toMillis(minutes);
            String result;
            try {
                ScheduledFuture<?> task = executor.scheduleAtFixedRate(() -> { }, period, period,
                        TimeUnit.MILLISECONDS);
                task.cancel(false);
                result = "scheduled";
            } catch (IllegalArgumentException e) {
                result = "refused";
            }
            System.out.println(parts[0] + "\t" + result);
        }
        executor.shutdownNow();
    }
}
